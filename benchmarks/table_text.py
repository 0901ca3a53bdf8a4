"""What a row of a published scaling table names, read as dpcost's inputs: the model, the GPU,
the node and its network.

A table's text spells these as its authors do ("ResNet-50 v1.5", "Tesla V100-SXM2-16GB",
"8x 200 Gb/s HDR InfiniBand per node"). These rules read any such row, not only the tables the
model was checked on, so a table dpcost has never seen runs through ``benchmarks/dp_scaling.py
--csv`` as it is written; what cannot be read stops with one line naming the row's field, its
text and what is allowed.

* **model**: the preset (or a ``models/<name>.toml`` file beside the table) whose name the text
  starts with, comparing words (case, dashes and spaces aside; "ResNet-50 v1.5" is ``resnet-50``,
  "InceptionV3" ``inception-v3``); the longest such name.
* **GPU**: the bundled GPU profile whose name's words the text starts with (vendor words such as
  "Tesla" and "NVIDIA" aside); else the GPU family (its first word with a digit: "A100") narrowed
  by the form factor (SXM, PCIe) and the memory the text states, the first bundled profile left.
* **node**: a bundled system with that many GPUs per node of the same GPU family and form factor,
  NVIDIA's reference node (a DGX) first, then one of exactly that GPU; the row's GPU swapped in.
  A GPU no such node holds (T4, A10, A100 PCIe) goes into a bundled PCIe node of that count, with
  its own PCIe generation between the GPUs.
* **network**: the NICs a text states ("<count>x <speed> Gb/s"), and their kind: InfiniBand and
  RoCE by their speed's bundled link, plain Ethernet (no RDMA) by its ``eth-<speed>g`` link (kernel
  TCP), NCCL told off InfiniBand (``NCCL_IB_DISABLE=1``) by the ``tcp-sockets`` link.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import hardware
from costmodel.training.workloads import model_names

VENDOR_WORDS = frozenset({"nvidia", "tesla", "amd", "instinct", "geforce", "radeon"})
FORM_FACTORS = ("sxm", "pcie", "nvl", "oam")
NCCL_SOCKETS = "NCCL_IB_DISABLE=1"
SOCKETS_LINK = "tcp-sockets"
# "<count>x [name] <speed> Gb/s" in a row's network column: the NICs a source states per node
# ("8x 200 Gb/s HDR InfiniBand", "1x InfiniBand 100 Gb/sec (4X EDR)").
STATED_NICS = re.compile(r"(\d+)\s*x\s+[^,;\d]*?(\d+)\s*Gb/s")
# The bundled link of each RDMA fabric by line rate (Gb/s); links.toml.
RDMA_LINKS = {"infiniband": {100: "ib-edr", 200: "ib-hdr", 400: "ib-ndr", 800: "ib-xdr"},
              "roce": {100: "roce-100", 200: "roce-200", 400: "roce-400"}}
RDMA_WORDS = {"infiniband": ("infiniband", " ib ", "edr", "hdr", "ndr"), "roce": ("roce",)}
ETHERNET_WORDS = ("ethernet", "gbe", "tcp")


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (letters and digits; a dot inside a number kept: "1.3b")."""
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+[a-z]*)?", text.lower())


def _starts_with(text_words: list[str], name_words: list[str]) -> bool:
    """Whether the text's words begin with the name's, spacing aside: "InceptionV3" is
    ``inception-v3`` and "ResNet50" ``resnet-50``; "ResNet-101" is not ``resnet-10``."""
    joined, name = "".join(text_words), "".join(name_words)
    if not joined.startswith(name):
        return False
    # the name must end where one of the text's words ends
    ends, position = set(), 0
    for word in text_words:
        position += len(word)
        ends.add(position)
    return len(name) in ends


def unreadable(field: str, text: str, allowed: str, row_id: str = "") -> SystemExit:
    where = f"{row_id}: " if row_id else ""
    return SystemExit(f"error: {where}{field}: got {text!r}; allowed: {allowed}")


def model_for(text: str, models_dir: Path | None = None, row_id: str = "") -> str:
    """The preset name, or the path of a ``models_dir/<name>.toml`` file, that ``text`` names."""
    candidates = {name: name for name in model_names()}
    if models_dir is not None and models_dir.is_dir():
        candidates.update({path.stem: str(path) for path in sorted(models_dir.glob("*.toml"))})
    text_words = words(text)
    found = [name for name in candidates if _starts_with(text_words, words(name))]
    if not found:
        files = f" or a file {models_dir}/<name>.toml" if models_dir is not None else ""
        raise unreadable("model", text, f"a text starting with a preset's name ({', '.join(sorted(model_names()))}){files}",
                         row_id)
    return candidates[max(found, key=lambda name: len("".join(words(name))))]


@functools.cache
def _gpus() -> tuple:
    return tuple(hardware.list_profiles("gpu"))


@functools.cache
def _systems() -> tuple:
    return tuple(hardware.list_profiles("system"))


def _form(name_words: list[str]) -> str | None:
    return next((form for word in name_words for form in FORM_FACTORS if word.startswith(form)), None)


def _memory_gb(text_words: list[str]) -> int | None:
    """The memory size the text states in GB, if it states exactly one."""
    joined = [f"{word}gb" if following == "gb" and word.isdigit() else word  # "80 GB" as "80GB"
              for word, following in zip(text_words, [*text_words[1:], ""])]
    sizes = {int(word[:-2]) for word in joined if re.fullmatch(r"\d+gb", word)}
    return sizes.pop() if len(sizes) == 1 else None


def gpu_for(text: str, row_id: str = "") -> str:
    """The bundled GPU profile ``text`` names (see the module docstring)."""
    text_words = [word for word in words(text) if word not in VENDOR_WORDS]
    gpus = _gpus()
    named = [gpu for gpu in gpus if _starts_with(text_words, words(gpu.name))]
    if named:
        return max(named, key=lambda gpu: len(gpu.name)).name
    family = _family(text_words)
    same = [gpu for gpu in gpus if family and _family(words(gpu.name)) == family]
    form = _form(text_words)
    if form:
        same = [gpu for gpu in same if _form(words(gpu.name)) == form]
    memory = _memory_gb(text_words)
    if memory:  # one size stated (a heading and a body that disagree state two: neither is taken)
        # a profile's memory is what the driver shows (e.g. 79.2 GiB of an 80 GB part)
        same = [gpu for gpu in same if abs(gpu.memory_bytes / 2**30 - memory) <= 0.12 * memory]
    if not same:
        raise unreadable("gpu_type", text, "a text naming a bundled GPU ("
                         + ", ".join(gpu.name for gpu in gpus) + "), its form factor and memory optional", row_id)
    return same[0].name


def _family(name_words: list[str]) -> str | None:
    """A GPU's family: its first word with a digit ("a100" of A100-SXM4-40GB, "3090" of RTX 3090)."""
    return next((word for word in name_words if re.search(r"\d", word)), None)


def _family_and_form(gpu) -> tuple[str | None, str | None]:
    name_words = words(gpu.name)
    return _family(name_words), _form(name_words)


def base_system_for(gpu_name: str, gpus_per_node: int, row_id: str = ""):
    """The bundled node for ``gpus_per_node`` of the GPU ``gpu_name`` (module docstring)."""
    gpu = hardware.load_gpu(gpu_name)
    systems = [system for system in _systems() if system.gpus_per_node == gpus_per_node]
    kin = [system for system in systems if _family_and_form(system.gpu) == _family_and_form(gpu)]
    if kin:
        # NVIDIA's reference node (a DGX) first, then a node of exactly this GPU, in bundled order
        chosen = min(kin, key=lambda system: (not system.name.startswith("dgx"), system.gpu.name != gpu.name))
        return chosen if chosen.gpu.name == gpu.name else dataclasses.replace(chosen, gpu=gpu)
    pcie = [system for system in systems if system.intra_fabric == "pcie"]
    if pcie and gpu.pcie_gen:
        # no node of its family: a PCIe node of that count (peer-to-peer on first: datacenter
        # cards allow it), the GPU swapped in and its own PCIe generation between the GPUs
        chosen = min(pcie, key=lambda system: not system.p2p)
        link = hardware.load_link(f"pcie{min(max(gpu.pcie_gen, 3), 5)}")
        return dataclasses.replace(chosen, name=f"{chosen.name}/{gpu.name}", gpu=gpu, intra_link=link,
                                   intra_bandwidth_Bps=link.bandwidth_Bps)
    raise unreadable("gpus_per_node", str(gpus_per_node),
                     f"a count for which a bundled system holds {gpu.name} or its kin "
                     f"({', '.join(f'{s.name}: {s.gpu.name} x{s.gpus_per_node}' for s in _systems())})", row_id)


def _network_link(inter_node: str, gbps: float):
    """The link of the NICs ``inter_node`` states at ``gbps`` (None: keep the system's)."""
    text = f" {inter_node.lower()} "
    for fabric, keys in RDMA_WORDS.items():
        if any(key in text for key in keys):
            links = RDMA_LINKS[fabric]
            nearest = min(links, key=lambda rate: abs(rate - gbps))
            return hardware.load_link(links[nearest])
    if any(key in text for key in ETHERNET_WORDS):
        name = f"eth-{gbps:g}g"
        known = {link.name for link in hardware.list_profiles("link")}
        return hardware.load_link(name if name in known else SOCKETS_LINK)
    return None


@functools.cache
def system_for(gpu_type: str, gpus_per_node: int, inter_node: str, sockets: bool = False, row_id: str = ""):
    """The system a row ran on: the bundled node for its GPU (:func:`base_system_for`) with the
    NICs the row states where they differ from the profile's (DLPerf's DGX-1-class nodes have
    one 100 Gb/s EDR NIC, not four), of the kind it states; ``sockets``: the NICs carry NCCL's
    socket transport (the bundled ``tcp-sockets`` link)."""
    gpu_name = gpu_for(gpu_type, row_id)
    system = base_system_for(gpu_name, gpus_per_node, row_id)
    stated = STATED_NICS.search(inter_node)
    if stated:
        count, gbps = int(stated.group(1)), float(stated.group(2))
        link = _network_link(inter_node, gbps) or system.nic_link
        if (count, gbps * 1e9 / 8, link.name) != (system.nics_per_node, system.nic_bandwidth_Bps, system.nic_link.name):
            system = dataclasses.replace(system, name=f"{system.name}-{count}x{gbps:g}G",
                                         nics_per_node=count, nic_bandwidth_Bps=gbps * 1e9 / 8, nic_link=link)
    if sockets:
        system = dataclasses.replace(system, name=f"{system.name}-sockets",
                                     nic_link=hardware.load_link(SOCKETS_LINK))
    return system
