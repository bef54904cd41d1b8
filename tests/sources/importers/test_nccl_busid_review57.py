"""Review of the PCI-address check on NCCL XML (22367b2): NCCL's own marker for an NVLink peer it
cannot see must still import.

NCCL (src/graph/xml.cc, ncclTopoGetXmlFromGpu) writes an NVLink whose remote device is not
visible, as inside a VM whose NVSwitches are hidden, with target="fffffff:ffff:ff" and sets its
tclass to 0x068000 ("Assume NVSwitch"). A dump taken there is a real tool output, not a bad value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files

_VM_DUMP = """<system version="1">
  <cpu numaid="0">
    <pci busid="0000:07:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0" gdr="1">
        <nvlink target="fffffff:ffff:ff" count="18" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:0f:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="90" rank="1" gdr="1">
        <nvlink target="fffffff:ffff:ff" count="18" tclass="0x068000"/>
      </gpu>
    </pci>
  </cpu>
</system>
"""


def test_nccl_marker_for_a_hidden_nvswitch_imports(tmp_path: Path) -> None:
    p = tmp_path / "vm.xml"
    p.write_text(_VM_DUMP)
    inv = import_files("nccl-xml", [p], node="h").inventory
    # By hand: both GPUs name the same unseen peer with NVSwitch's class, so the file describes
    # one NVSwitch (as the base wheel imported it) and two GPU-to-NVSwitch links of 18 NVLinks.
    switches = sorted(o.id for o in inv.objects.values() if o.kind == "nvswitch")
    assert switches == ["h/nvsw0"]
    links = sorted((lk.a, lk.b, lk.attrs["count"]) for lk in inv.links.values() if lk.kind == "nvswitch")
    assert links == [("h/gpu0", "h/nvsw0", 18), ("h/gpu1", "h/nvsw0", 18)]


def test_other_bad_targets_are_still_refused(tmp_path: Path) -> None:
    p = tmp_path / "bad.xml"
    p.write_text(_VM_DUMP.replace("fffffff:ffff:ff", "0000:.nan:1c.0", 1))
    with pytest.raises(TopologError, match=r"bad.xml:5:.*'0000:\.nan:1c\.0' is not a PCI address"):
        import_files("nccl-xml", [p], node="h")
