"""`topolog serve` reads observations with the inventory (verifier/service/revision.py): a revision's
inventory has the GPUs its observations take out of service failed, so no admit places on them, and an
edit to an observation file is a new revision.

By hand: the dcgm-exporter scrape of dgx03 shipped with the DGX H100 example
(inventories/observed/dgx-h100-pod/dgx03/dcgm-exporter.prom) says GPU 0's last XID is 95 (uncontained
ECC: the Xid Catalog's immediate action is a GPU reset) and GPU 3's is 13 (the application's). It prints
no time, so it is never stale: dgx03/gpu0 alone is out of service.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from service.serve_helpers import QUICK_S, ROOT, copy_inputs

from verifier.service.config import ServeConfig
from verifier.service.revision import OBSERVED_DIR, build_revision
from verifier.service.watch import served_paths

SCRAPE = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "dcgm-exporter.prom"


def test_revision_fails_what_its_observations_take_out_of_service(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path, "dgx-h100-pod.yaml")
    config = ServeConfig((inventory,), reload_quiet_s=QUICK_S)
    plain = build_revision(config)
    assert plain.inputs.inventory.objects["dgx03/gpu0"].state is None
    host = tmp_path / OBSERVED_DIR / "dgx03"
    host.mkdir(parents=True)
    shutil.copy(SCRAPE, host / "dcgm.prom")
    observed = build_revision(config, plain)
    assert observed.id != plain.id
    assert list(observed.files["observed"]) == [str(host / "dcgm.prom")]
    states = {o.id: o.state for o in observed.inputs.inventory.objects.values() if o.kind == "gpu" and o.state}
    assert states == {"dgx03/gpu0": "down"}
    # the folder is watched as the policy folder is: any file under it is a reload
    _files, folders = served_paths(config)
    assert (tmp_path / OBSERVED_DIR).resolve() in {f.resolve() for f in folders}
    # GPU 0's XID cleared (the GPU was reset): a new revision, and nothing is failed any more
    (host / "dcgm.prom").write_text(SCRAPE.read_text().replace('"} 95', '"} 0'))
    cleared = build_revision(config, observed)
    assert cleared.id != observed.id
    assert not [o for o in cleared.inputs.inventory.objects.values() if o.kind == "gpu" and o.state]
