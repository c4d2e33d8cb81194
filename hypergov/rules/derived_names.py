"""Every name hypergov derives from one name in the tree, each place that name is written, and the
bound of that place (`aws_limits.LIMITS`), so that a name that validates fits wherever it goes.

The longest name is not always the one that bounds: a team's namespace `hyperpod-ns-<team>` holds
63 characters, but every job names the team's queue in a label value
(`kueue.x-k8s.io/queue-name: hyperpod-ns-<team>-localqueue`), which holds 63 too, so a team name
has 40. The bound of each input is computed from this table (`input_bound`), never typed.

AWS names made of two inputs (`<team>-on-<cluster>`, `<org>-<team>-<persona>`, budgets) and the
scheduler config's are checked with their patterns by `identity._derived_names` (IDN002).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Literal

from hypergov import naming
from hypergov.model.aws_limits import (
    LABEL_VALUE,
    LIMITS,
    NAMESPACE,
    OBJECT_NAME,
    ROLE_NAME,
    ROLE_POLICY_NAME,
    TAG_VALUE,
    limit_max,
)
from hypergov.model.common import PERSONAS, Persona
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, SourcePos
from hypergov.rules.base import problem

Input = Literal["team", "priority class", "cluster", "org"]
Mode = Literal["task governance", "plain EKS"]
EVERY_MODE: tuple[Mode, ...] = ("task governance", "plain EKS")
TASK_GOVERNANCE: tuple[Mode, ...] = ("task governance",)
PLAIN_EKS: tuple[Mode, ...] = ("plain EKS",)


@dataclass(frozen=True)
class DerivedName:
    """A name made from one input by `name` (the input plus fixed text), written at `place`,
    whose length `limit` (a LIMITS row) bounds, on clusters in `modes`."""

    input: Input
    place: str
    limit: str
    name: Callable[[str], str]
    modes: tuple[Mode, ...] = EVERY_MODE

    @property
    def most(self) -> int:
        return limit_max(self.limit)

    @property
    def room(self) -> int:
        """The longest input that fits this place."""
        return self.most - len(self.name(""))


def _itself(name: str) -> str:
    """Written as it is: a tag value, a cost-attribution label value (`components.tags`)."""
    return name


def _persona_binding(team: str, *, persona: Persona) -> str:
    return naming.persona_role_binding(team, persona)


QUEUE_LABEL = f"label value {naming.KUEUE_QUEUE_NAME_LABEL}"
PRIORITY_LABEL = f"label value {naming.KUEUE_PRIORITY_CLASS_LABEL}"
STACK_LABEL = f"label value {naming.STACK_LABEL}"

DERIVED_NAMES: tuple[DerivedName, ...] = (
    DerivedName("team", f"{QUEUE_LABEL} (the team's LocalQueue, on every job)", LABEL_VALUE,
                naming.kueue_local_queue),
    DerivedName("team", "namespace name", NAMESPACE, naming.namespace),
    DerivedName("team", "LocalQueue name", OBJECT_NAME, naming.kueue_local_queue),
    DerivedName("team", "ClusterQueue name", OBJECT_NAME, naming.kueue_cluster_queue),
    *(DerivedName("team", f"{persona} RoleBinding name (longer than its Role's)", OBJECT_NAME,
                  partial(_persona_binding, persona=persona)) for persona in PERSONAS),
    DerivedName("team", "ValidatingAdmissionPolicy name", OBJECT_NAME, naming.workload_admission_policy),
    DerivedName("team", f"{STACK_LABEL} (the project stack)", LABEL_VALUE, naming.project_stack),
    DerivedName("team", "label value hypergov.io/<project tag>", LABEL_VALUE, _itself),
    DerivedName("team", "value of the project tag", TAG_VALUE, _itself),
    DerivedName("priority class", f"{PRIORITY_LABEL} (the add-on's WorkloadPriorityClass)", LABEL_VALUE,
                naming.kueue_priority_class, TASK_GOVERNANCE),
    DerivedName("priority class", "WorkloadPriorityClass name", OBJECT_NAME, naming.kueue_priority_class,
                TASK_GOVERNANCE),
    # named as the add-on names its own, so a job's label is the same on every cluster
    DerivedName("priority class", f"{PRIORITY_LABEL} (hypergov's WorkloadPriorityClass)", LABEL_VALUE,
                naming.kueue_priority_class, PLAIN_EKS),
    DerivedName("priority class", "WorkloadPriorityClass name", OBJECT_NAME, naming.kueue_priority_class,
                PLAIN_EKS),
    DerivedName("cluster", f"{STACK_LABEL} (the cluster stack)", LABEL_VALUE, naming.cluster_stack),
    DerivedName("cluster", "label value hypergov.io/cluster", LABEL_VALUE, _itself),
    DerivedName("cluster", "value of the hypergov:cluster tag", TAG_VALUE, _itself),
    DerivedName("org", "IAM role name of the Platform Administrator", ROLE_NAME, naming.platform_admin_role_name),
    DerivedName("org", "IAM policy name of the Platform Administrator", ROLE_POLICY_NAME,
                naming.platform_admin_policy_name),
    DerivedName("org", "IAM policy name of the permissions boundary", ROLE_POLICY_NAME, naming.boundary_policy_name),
    DerivedName("org", "label value hypergov.io/org", LABEL_VALUE, _itself),
    DerivedName("org", "value of the hypergov:org tag", TAG_VALUE, _itself),
)


def places(of: Input, modes: tuple[Mode, ...] = EVERY_MODE) -> list[DerivedName]:
    return [d for d in DERIVED_NAMES if d.input == of and set(d.modes) & set(modes)]


def input_bound(of: Input, modes: tuple[Mode, ...] = EVERY_MODE) -> DerivedName:
    """The place that bounds an input most tightly (its `room` is the input's longest length)."""
    return min(places(of, modes), key=lambda d: (d.room, d.place))


def exceeded(of: Input, value: str, modes: tuple[Mode, ...]) -> list[tuple[DerivedName, str]]:
    """Each place where the name derived from `value` is too long, with that name."""
    return [(d, d.name(value)) for d in places(of, modes) if len(d.name(value)) > d.most]


def check_derived_names(tree: GovernanceTree, *, well_formed: Callable[[str], bool]) -> Iterator[Problem]:
    """IDN001 for a team, cluster or priority class name too long for a place it is written (IDN002
    for the org's IAM names); a malformed name is reported for its form alone (`well_formed`)."""
    for team in sorted(t for t in tree.project_files if well_formed(t)):
        pos = SourcePos(tree.files.get(f"projects/{team}.yaml", f"projects/{team}.yaml"))
        yield from _too_long(pos, "IDN001", "team", team, EVERY_MODE,
                             subject=f"team name {team!r} (the file name)", fix="rename the file")
    for name, cluster in sorted(tree.clusters.items()):
        modes = TASK_GOVERNANCE if cluster.model.task_governance else PLAIN_EKS
        if well_formed(name):
            pos = SourcePos(tree.files.get(f"clusters/{name}.yaml", f"clusters/{name}.yaml"))
            yield from _too_long(pos, "IDN001", "cluster", name, modes,
                                 subject=f"cluster name {name!r} (the file name)", fix="rename the file")
        for i, pc in enumerate(cluster.model.scheduler.priority_classes):
            yield from _too_long(cluster.pos("scheduler", "priority_classes", i, "name"), "IDN001",
                                 "priority class", pc.name, modes,
                                 subject=f"priority class name {pc.name!r} on a {modes[0]} cluster",
                                 fix="rename the priority class (and the projects and workload classes naming it)")
    if tree.org is not None:
        yield from _too_long(tree.org.pos("name"), "IDN002", "org", tree.org.model.name, EVERY_MODE,
                             subject=f"org name {tree.org.model.name!r}", fix="shorten the org name")


def _too_long(pos: SourcePos, rule: str, of: Input, value: str, modes: tuple[Mode, ...], *, subject: str,
              fix: str) -> Iterator[Problem]:
    found = exceeded(of, value, modes)
    if not found:
        return
    said = "; ".join(f"{d.place} '{name}' would be {len(name)} characters, {LIMITS[d.limit].aws_field} "
                     f"holds at most {d.most}" for d, name in found)
    tightest = input_bound(of, modes)
    yield problem(pos, rule, f"{subject} is {len(value)} characters: {said}",
                  f"{fix}: a {of} name has at most {tightest.room} characters, as its {tightest.place} "
                  f"holds {tightest.most} (shorten it by {len(value) - tightest.room})")
