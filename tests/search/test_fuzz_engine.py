"""The 10,000-call fuzz of ``tests/env/test_fuzz.py`` against the real engine over a real index."""

import random

from sws.env import WikiTools
from tests.env.test_fuzz import BAD_NAMES, N_CALLS, NAMES, check_observation, random_arguments


def test_fuzz_tool_calls_against_the_real_engine(engine):
    rng = random.Random(7)
    tools = WikiTools(engine)
    answered = 0
    for _ in range(N_CALLS):
        name = rng.choice(NAMES) if rng.random() < 0.93 else rng.choice(BAD_NAMES)
        arguments = random_arguments(rng, name.strip())
        observation = tools.call_tool(name, arguments)
        check_observation(name, arguments, observation)
        answered += observation.startswith("1. [")
    assert answered > 1000
