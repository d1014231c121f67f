"""``counted(2, "tensor") == "2 tensors"``: counts in messages as the user would write them
(the C++ layers' support/counted.h)."""


def counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
