"""The `topolog authorize` and `topolog audit` commands (added to the group in verifier/cli/main.py).

Exit codes keep their meaning: `authorize` exits 0 on Allow, 1 on Deny (like a failed
check; an evaluation error is a Deny and is printed as a finding), 2 on bad input (unknown
principal or resource, invalid policy, bad context). `audit` exits 0, or 1 when some
policy failed during the audit (those requests were denied), or with `--fail-on-change`
when a decision changed; 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from verifier.authorization.entities import HARDWARE_TYPES, uid
from verifier.authorization.evaluate import ACTIONS, Decision, Request, parse_context
from verifier.authorization.setup import AuthzSetup, load_setup
from verifier.cli.errors import guard
from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.principals import principals_file_for

POLICIES_OPTION = click.option(
    "--policies",
    "policies",
    type=click.Path(path_type=Path),
    default=None,
    help="Policy directory (schema.cedarschema + *.cedar). Default: policies/ next to the inventory, "
    "else the shipped policies/.",
)
PRINCIPALS_OPTION = click.option(
    "--principals",
    "principals",
    type=click.Path(path_type=Path),
    default=None,
    help="Principals file. Default: principals.yml next to the first inventory.",
)


def _bad(message: str, where: str = "<request>") -> TopologError:
    return TopologError.at(SourceLocation(where), message)


def resolve(setup: AuthzSetup, text: str, role: str) -> str:
    """`Type::"id"` as written, or a bare id: a principal id or an inventory object id."""
    entities = setup.graph.entities
    if "::" in text:
        etype, _, rest = text.partition("::")
        eid = rest[1:-1] if len(rest) >= 2 and rest[0] == rest[-1] == '"' else rest
        candidate = uid(etype, eid)
        if candidate not in entities:
            raise _bad(f"--{role} {text}: no such entity in the inventory and principals file")
        return candidate
    if role == "principal":
        p = setup.principals.principals.get(text)
        if p is None:
            raise _bad(f"--principal {text!r} is not in {setup.principals.file}")
        return p.uid
    obj = setup.inventory.objects.get(text)
    if obj is not None and obj.kind in HARDWARE_TYPES:
        return uid(HARDWARE_TYPES[obj.kind], obj.id)
    domain = uid("NvlinkDomain", text)
    if domain in entities and obj is None:
        return domain
    raise _bad(
        f"--resource {text!r} is not a GPU, node, rack or pod of the inventory "
        '(or write the uid, e.g. NvlinkDomain::"dgx00/gpu0")'
    )


def _decision_lines(setup: AuthzSetup, request: Request, d: Decision) -> list[str]:
    lines = [f"{d.word}  {request.principal} {request.action} {request.resource}"]
    if request.context:
        lines[0] += f"  context {json.dumps(request.context, sort_keys=True)}"
    if d.errors:
        for policy, message in d.errors:
            lines.append(f"  finding: policy {policy or '?'} failed; the request is denied (fail closed): {message}")
    if d.reasons:
        decided = ", ".join(f"{r} ({setup.bundle.effect(r)})" for r in d.reasons)
        lines.append(f"  decided by: {decided}")
    elif not d.errors:
        lines.append("  decided by: no policy permits it (default deny)")
    return lines


@click.command("authorize")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--principal", required=True, help='Who asks: User::"alice", or a bare id from the principals file.')
@click.option("--action", required=True, type=click.Choice(ACTIONS), help="What they want to do.")
@click.option("--resource", required=True, help='On what: Gpu::"dgx00/gpu0", or a bare inventory id.')
@click.option(
    "--context",
    "context_text",
    default="{}",
    show_default=True,
    help='Request context as JSON, e.g. {"incident": true}.',
)
@POLICIES_OPTION
@PRINCIPALS_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def authorize_cmd(
    inventory: tuple[Path, ...],
    principal: str,
    action: str,
    resource: str,
    context_text: str,
    policies: Path | None,
    principals: Path | None,
    fmt: str,
) -> None:
    """Decide one request with the Cedar policies; print the decision and the policies that decided it.

    Exit status: 0 Allow, 1 Deny (an evaluation error is a Deny, reported as a finding), 2 bad input.

    \b
    Example:
      topolog authorize inventories/mixed-fleet.yaml --principal ivan --action schedule \\
          --resource a100-n0/gpu0
    """

    def body() -> int:
        missing = [p for p in (*inventory, *(x for x in (policies, principals) if x)) if not p.exists()]
        if missing:
            raise _bad("no such file or directory", str(missing[0]))
        try:
            context = parse_context(context_text)
        except ValueError as err:
            raise _bad(str(err), "--context") from None
        setup = load_setup(list(inventory), policies, principals)
        request = Request(resolve(setup, principal, "principal"), action, resolve(setup, resource, "resource"), context)
        d = setup.authorizer.decide_one(request)
        invalid = [m for p, m in d.errors if not p and m.startswith("failed to build request")]
        if invalid:
            raise _bad(f"the request does not match the schema: {invalid[0]}", "--context")
        if fmt == "json":
            click.echo(
                json.dumps(
                    {
                        "decision": d.word,
                        "principal": request.principal,
                        "action": request.action,
                        "resource": request.resource,
                        "context": request.context,
                        "policies": [{"id": r, "effect": setup.bundle.effect(r)} for r in d.reasons],
                        "errors": [{"policy": p, "message": m} for p, m in d.errors],
                    },
                    indent=2,
                    sort_keys=True,
                )
            )
        else:
            click.echo("\n".join(_decision_lines(setup, request, d)))
        return 0 if d.allowed else 1

    sys.exit(guard(body, "nothing is authorized"))


@click.command("audit")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@POLICIES_OPTION
@PRINCIPALS_OPTION
@click.option(
    "--against",
    type=click.Path(path_type=Path),
    default=None,
    help="Another policy directory, or another inventory: report every decision that changes.",
)
@click.option(
    "--action",
    "actions",
    type=click.Choice(ACTIONS),
    multiple=True,
    help="Audit these actions only (repeatable). Default: all.",
)
@click.option(
    "--resource-type",
    type=click.Choice(["Gpu", "Node"]),
    default="Gpu",
    show_default=True,
    help="Resources asked about; cells count the GPUs they hold.",
)
@click.option("--teams", "teams_only", is_flag=True, help="Rows are teams only (a team asks as itself).")
@click.option("--fail-on-change", is_flag=True, help="With --against: exit 1 when any decision changed.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def audit_cmd(
    inventory: tuple[Path, ...],
    policies: Path | None,
    principals: Path | None,
    against: Path | None,
    actions: tuple[str, ...],
    resource_type: str,
    teams_only: bool,
    fail_on_change: bool,
    fmt: str,
) -> None:
    """Show who may do what where: principals by hardware group, with GPU counts.

    Principals and resources are grouped into equivalence classes and Cedar is asked once per
    class pair. With --against, every decision that differs is reported instead.

    \b
    Example:
      topolog audit inventories/mixed-fleet.yaml --action schedule
      topolog audit inventories/mixed-fleet.yaml --against ../policies-next --format json
    """
    from verifier.authorization.audit import audit, diff, diff_to_json, render_diff_text, render_text, to_json

    def body() -> int:
        missing = [p for p in (*inventory, *(x for x in (policies, principals, against) if x)) if not p.exists()]
        if missing:
            raise _bad("no such file or directory", str(missing[0]))
        chosen = actions or ACTIONS
        setup = load_setup(list(inventory), policies, principals)
        if against is not None:
            if against.is_dir():
                other = load_setup(list(inventory), against, principals)
            else:
                # The other inventory is judged by the same policies; its own principals file if it has one.
                people = principals or principals_file_for([against]) or Path(setup.principals.file)
                other = load_setup([against], setup.bundle.directory, people)
            result = diff(setup, other, chosen, resource_type, teams_only)
            if fmt == "json":
                click.echo(json.dumps(diff_to_json(result), indent=2, sort_keys=True))
            else:
                click.echo(render_diff_text(result), nl=False)
            return 1 if fail_on_change and result.changed else 0
        report = audit(setup, chosen, resource_type, teams_only)
        if fmt == "json":
            click.echo(json.dumps(to_json(report), indent=2, sort_keys=True))
        else:
            click.echo(render_text(report), nl=False)
        return report.exit_code

    sys.exit(guard(body, "nothing is authorized"))
