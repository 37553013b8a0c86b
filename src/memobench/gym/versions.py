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
    "T01-check-top-drawer": ("7aa69177781e4098", "5080f166b7a9c87e"),
    "T02-check-middle-drawer-then-bowl": ("ae2945a3d52d1bf6", "45e1d4055faefa61"),
    "T03-check-all-drawers": ("8ff51005624c0ff1", "2d560db1f851f7fa"),
    "T04-microwave-open-close": ("c1157ef9d97f15c2", "e838117489b6acb2"),
    "T05-microwave-then-bowl": ("f89af7cacfc18000", "b2279f495695616c"),
    "T06-stove-on-off": ("505e21d18b085ba6", "d02dcfabd335fb63"),
    "T07-stove-on-off-pan-on-stove": ("adb6559bd8da3970", "77011241b71793e6"),
    "T08-stove-on-off-pan-on-shelf": ("5f321e1103e7e095", "8cf8e4a80509cbd7"),
    "T09-pour-twice-bowl": ("c3f4058f052e2fb7", "ee56336c45bbde6d"),
    "T10-pour-twice-mug-then-tray": ("d9bc65ab0e3c45bc", "cd4b6152eac64312"),
    "S01-hide-and-retrieve-butter": ("4c5de691db3bb5d5", "48d63cc147752f08"),
    "S02-hide-and-retrieve-cream-cheese": ("8e79016cb88adf2b", "1a6a45265a3961e7"),
    "S03-hide-and-retrieve-chocolate-pudding": ("53ae887a7a48ddd1", "da921dbf81693e3b"),
    "S04-hide-and-retrieve-popcorn": ("32fe4a3e253776a5", "4614aa842c46b4af"),
    "S05-hide-and-retrieve-cookies": ("98e4fc515d0565ec", "6ccec4cba44cdd11"),
    "S06-two-drawers-retrieve-green-butter": ("885106eca355f1bd", "432dc8cb463aabd1"),
    "S07-two-drawers-retrieve-green-pudding": ("363ea4b9c928ad73", "155a6e95bbb1e7ff"),
    "S08-two-drawers-retrieve-red-cream-cheese": ("ef307c537f55d194", "c65b5a9b10a2ee2b"),
    "S09-one-drawer-retrieve-green-butter-and-pudding": ("f5539c0d1973c026", "7e374bedb256e804"),
    "S10-one-drawer-retrieve-red-cream-cheese-and-pudding": ("61014c455e6fb7f6", "563c90d9fbd81459"),
    "O01-cued-milk": ("765a39c020c25e1e", "ebc2c84964c5b2a2"),
    "O02-cued-bowl": ("ce2346d3b2190006", "e07a1f3253133136"),
    "O03-cued-butter-row": ("d659076b29dc761f", "7f43129713974d50"),
    "O04-cued-carton-row": ("9310a4baeffac320", "24e45a8046647fe2"),
    "O05-cued-mug": ("d765130b156c7a90", "d511c59a97e2e9d3"),
    "P01-assembly": ("ce4cde07bfeb7a2e", "1c298ab0e7074b51"),
    "P02-clear-and-serve": ("b48c3c5bf8ed5724", "9b3b2d572e2e3468", "b37cc865e1b519a5"),
    "P03-discard-then-plate": ("27dcf710ea2029d5", "7137c1dd25e09086"),
    "P04-stack-in-order": ("ab1994ed7cf1e0b5", "aef80e072b86cf2d"),
    "P05-buffered-swap": ("042e042fe1700f38", "4e7e038f930e6761"),
}
