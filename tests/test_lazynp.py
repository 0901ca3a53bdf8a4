"""dpbase.lazynp: the numpy stand-in answers as numpy does and asks numpy once per name."""

from __future__ import annotations

import numpy

from dpbase.lazynp import _LazyNumpy


def test_each_name_is_numpys_own_and_kept_after_the_first_lookup():
    proxy = _LazyNumpy()
    assert "where" not in vars(proxy)
    assert proxy.where is numpy.where and proxy.inf == numpy.inf
    assert vars(proxy)["where"] is numpy.where  # the next lookup finds it without __getattr__
    assert proxy.where is numpy.where
    assert proxy.asarray([1.0, 2.0]).tolist() == [1.0, 2.0]
