"""Which task spec each Gymnasium env version stands for.

``SPEC_VERSIONS[task_id][v - 1]`` is the spec hash (:attr:`memobench.core.suite.Task.spec_hash`)
of ``MEMOBench/<task_id>-v<v>``. An env id therefore always means one episode definition:
when a task's spec changes (anything that can change an episode: BDDL, checkpoints,
violations, horizon, cue...), its new hash is appended here and the id's version goes up.
Only the newest version can be built (the package holds only the current spec); making an
id whose hash is not the installed task's fails, naming both hashes.
``tests/gym/test_registration.py`` fails until every task's current hash is listed last.
"""

from __future__ import annotations

SPEC_VERSIONS: dict[str, tuple[str, ...]] = {
    "T01-check-top-drawer": ("7aa69177781e4098", "217bf60c7c2205fd"),
    "T02-check-middle-drawer-then-bowl": ("ae2945a3d52d1bf6", "62a3f169689dba93"),
    "T03-check-all-drawers": ("8ff51005624c0ff1", "647cd63dc0304a9c"),
    "T04-microwave-open-close": ("c1157ef9d97f15c2", "1a124ecd13410dba"),
    "T05-microwave-then-bowl": ("f89af7cacfc18000", "b57025bbfe52eb75"),
    "T06-stove-on-off": ("505e21d18b085ba6", "3d90f71d2789dc89"),
    "T07-stove-on-off-pan-on-stove": ("adb6559bd8da3970", "02fd485b39790851"),
    "T08-stove-on-off-pan-on-shelf": ("5f321e1103e7e095", "09c752ed413d05ef"),
    "T09-pour-twice-bowl": ("c3f4058f052e2fb7",),
    "T10-pour-twice-mug-then-tray": ("d9bc65ab0e3c45bc",),
    "S01-hide-and-retrieve-butter": ("4c5de691db3bb5d5", "4933bed47d18dd2b"),
    "S02-hide-and-retrieve-cream-cheese": ("8e79016cb88adf2b", "0528c49e8102abdf"),
    "S03-hide-and-retrieve-chocolate-pudding": ("53ae887a7a48ddd1", "edf4627d9917a10e"),
    "S04-hide-and-retrieve-popcorn": ("32fe4a3e253776a5", "e59765ecb2686a21"),
    "S05-hide-and-retrieve-cookies": ("98e4fc515d0565ec", "888c7b331e9df5da"),
    "S06-two-drawers-retrieve-green-butter": ("885106eca355f1bd", "70086c156721e4a6"),
    "S07-two-drawers-retrieve-green-pudding": ("363ea4b9c928ad73", "5bd8171b8fe1bbde"),
    "S08-two-drawers-retrieve-red-cream-cheese": ("ef307c537f55d194", "10321c1844cef4aa"),
    "S09-one-drawer-retrieve-green-butter-and-pudding": ("f5539c0d1973c026", "065afe89ed9bf1b7"),
    "S10-one-drawer-retrieve-red-cream-cheese-and-pudding": ("61014c455e6fb7f6", "edb647b23ff663e8"),
    "O01-cued-milk": ("765a39c020c25e1e",),
    "O02-cued-bowl": ("ce2346d3b2190006",),
    "O03-cued-butter-row": ("d659076b29dc761f",),
    "O04-cued-carton-row": ("9310a4baeffac320",),
    "O05-cued-mug": ("d765130b156c7a90",),
    "P01-assembly": ("ce4cde07bfeb7a2e",),
    "P02-clear-and-serve": ("b48c3c5bf8ed5724", "9b3b2d572e2e3468"),
    "P03-discard-then-plate": ("27dcf710ea2029d5",),
    "P04-stack-in-order": ("ab1994ed7cf1e0b5",),
    "P05-buffered-swap": ("042e042fe1700f38",),
}
