"""The memory oracle's text, shared by the harness's prompt and the LeRobot export."""

from memobench.core.oracle import memory_line, oracle_prompt


def test_memory_line_lists_completed_texts_or_says_nothing_is_done():
    assert memory_line([]) == "Memory: nothing done yet."
    assert memory_line(["opened the drawer"]) == "Memory: opened the drawer."
    assert memory_line(["a", "b"]) == "Memory: a; b."


def test_oracle_prompt_is_the_instruction_then_the_memory_line():
    assert oracle_prompt("open it", ["a"]) == "open it\nMemory: a."
