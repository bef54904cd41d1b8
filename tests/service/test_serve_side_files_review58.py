"""A policy folder or principals file the gate decides by, gone, is not replaced by the next one found (R-HI review).

8f76f9d stops a run whose conventional policies/ is a file or a link to nothing, rather than pass
on to the next place or the shipped policies ("a policies/ mount gone missing put the shipped
policies in force"). A policies/ that is simply gone (removed, renamed, unmounted) still had a
serve reload pass on: the shipped policies went in force with reload 200, and a site's forbid
with them (DENY became ALLOW). The same for principals.yml: the working folder's was taken. A live
gate knows what it decides by: such a reload is refused, and putting the file back reloads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from service.serve_helpers import copy_inputs, serving

ASK = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
SAYS = "the gate decides by is gone, and the next found is "
EXPECTED = (
    "; expected it back (the gate keeps deciding by the live revision), or the gate started again to use the next"
)


def test_a_conventional_policy_folder_or_principals_file_gone_refuses_the_reload(tmp_path: Path) -> None:
    # The inventory, principals.yml and policies/ in site/; the gate runs in tmp_path, which holds
    # a principals.yml of its own (the next place) and no policies/ (the next are the shipped ones).
    site = tmp_path / "site"
    copy_inputs(site)
    shutil.copy(site / "principals.yml", tmp_path / "principals.yml")
    # The site forbids everything: any ALLOW would come from other policies than the site's.
    (site / "policies" / "zz_site.cedar").write_text('@id("site-forbids-all")\nforbid (principal, action, resource);\n')
    with serving(tmp_path, inventory="site/mixed-fleet.yaml") as server, server.client() as c:
        assert c.post("/v1/authorize", json=ASK).json()["decision"] == "DENY"
        live = server.revision()["revision"]

        (site / "policies").rename(tmp_path / "away")
        r = c.post("/v1/reload")
        assert r.status_code == 422
        (error,) = r.json()["errors"]
        assert error.startswith(f"{site / 'policies'}: the policy folder {SAYS}the shipped policies (")
        assert error.endswith(EXPECTED)
        assert c.post("/v1/authorize", json=ASK).json()["decision"] == "DENY"
        assert server.revision()["revision"] == live

        (tmp_path / "away").rename(site / "policies")
        assert c.post("/v1/reload").status_code == 200

        # principals.yml beside the inventory gone: the working folder's (relative, as found) is next.
        (site / "principals.yml").rename(tmp_path / "away.yml")
        r = c.post("/v1/reload")
        assert r.status_code == 422
        assert r.json()["errors"] == [f"{site / 'principals.yml'}: the principals file {SAYS}principals.yml{EXPECTED}"]

        (tmp_path / "away.yml").rename(site / "principals.yml")
        r = c.post("/v1/reload")
        assert r.status_code == 200 and r.json()["revision"] == live
