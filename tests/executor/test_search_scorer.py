"""The beam scorer, the logits processors and the sampling engine of onnxruntime's generation operators, on tiny
cases computed by hand."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.executor.search.processors import LOWEST, Processors
from explorer.executor.search.scorer import BeamScorer
from explorer.executor.search.token_draws import MinstdRand0

EOS, PAD = 9, 0
PROMPT = np.array([[1, 2, 3], [1, 2, 3]], dtype=np.int32)  # one batch entry, two beams, prompt length 3


def _step(scorer: BeamScorer, sequences: np.ndarray, candidates: list[tuple[float, int, int]]) -> np.ndarray:
    """One step on (score, token, beam) candidates, best first; the sequences after it."""
    scores, tokens, beams = (np.array(column) for column in zip(*candidates))
    scorer.process(sequences, scores.astype(np.float32), tokens.astype(np.int32), beams.astype(np.int32))
    return np.concatenate([sequences[scorer.next_indices], scorer.next_tokens[:, None]], axis=1)


def _two_steps(length_penalty: float, early_stopping: bool) -> tuple[BeamScorer, np.ndarray]:
    scorer = BeamScorer(1, 2, length_penalty, early_stopping, EOS, PAD)
    # step 1: beam 0 ends at once (kept, length 3); the eos of the third candidate is past the first two: dropped
    sequences = _step(scorer, PROMPT, [(-1.0, EOS, 0), (-1.5, 4, 1), (-2.0, EOS, 1), (-2.5, 5, 0)])
    np.testing.assert_array_equal(sequences, [[1, 2, 3, 4], [1, 2, 3, 5]])
    np.testing.assert_array_equal(scorer.next_scores, [-1.5, -2.5])
    assert not scorer.entries[0].done  # one hypothesis of two
    # step 2: the new beam 1 ([1, 2, 3, 5]) ends (kept, length 4); beam 0 goes on with the best score, -1.2
    sequences = _step(scorer, sequences, [(-1.2, 6, 0), (-1.6, EOS, 1), (-1.8, 7, 1), (-3.0, EOS, 0)])
    np.testing.assert_array_equal(sequences, [[1, 2, 3, 4, 6], [1, 2, 3, 5, 7]])
    return scorer, sequences


def test_the_length_penalty_divides_by_the_length_to_its_power():
    scorer, _ = _two_steps(1.0, early_stopping=True)
    kept = scorer.entries[0].kept  # -1.0 / 3 beats -1.6 / 4
    assert [k[1].tolist() for k in kept] == [[1, 2, 3], [1, 2, 3, 5]]
    np.testing.assert_allclose([k[0] for k in kept], [-1 / 3, -0.4], rtol=1e-6)
    scorer, _ = _two_steps(2.0, early_stopping=True)
    kept = scorer.entries[0].kept  # -1.6 / 16 beats -1.0 / 9: a longer hypothesis wins
    assert [k[1].tolist() for k in kept] == [[1, 2, 3, 5], [1, 2, 3]]
    np.testing.assert_allclose([k[0] for k in kept], [-0.1, -1 / 9], rtol=1e-6)


def test_early_stopping_ends_once_beams_hypotheses_are_kept():
    scorer, _ = _two_steps(1.0, early_stopping=True)
    assert scorer.is_done


def test_without_early_stopping_an_open_beam_that_can_win_goes_on():
    """-1.2 over length 4 (-0.3) would beat the worst kept hypothesis (-0.4): not done. At the next step the best
    open score -2.0 over 5 (-0.4) cannot beat it: done."""
    scorer, sequences = _two_steps(1.0, early_stopping=False)
    assert not scorer.is_done
    _step(scorer, sequences, [(-2.0, 6, 0), (-2.2, 7, 1), (-2.4, 8, 0), (-2.6, 5, 1)])
    assert scorer.is_done


def test_finalize_adds_the_open_beams_and_pads_the_sequences():
    scorer = BeamScorer(1, 2, 1.0, False, EOS, PAD)
    sequences = _step(scorer, PROMPT, [(-1.0, EOS, 0), (-1.5, 4, 1), (-2.0, 5, 0), (-2.5, 6, 1)])
    out, scores = scorer.finalize(sequences, scorer.next_scores, 2, 6)
    # kept: [1, 2, 3] at -1/3; the open beams [1, 2, 3, 4] at -1.5/4 and [1, 2, 3, 5] at -2/4: the best two
    np.testing.assert_array_equal(out[0], [[1, 2, 3, 0, 0, 0], [1, 2, 3, 4, 0, 0]])
    np.testing.assert_allclose(scores[0], [-1 / 3, -0.375], rtol=1e-6)


def test_processors_in_onnxruntimes_order():
    scores = np.array([[-1.0, 2.0, -3.0, 4.0, 0.5]], dtype=np.float32)
    sequences = np.array([[1, 2, 1]], dtype=np.int32)
    Processors(eos=4, min_length=5, repetition_penalty=2.0, no_repeat_ngram_size=2).apply(scores, sequences, 2)
    # 1 and 2 were seen: 2.0 / 2 and -3.0 * 2; the bigram (1, 2) was seen and the row ends with 1: 2 is blocked;
    # the row is shorter than min_length: the eos id 4 is blocked
    np.testing.assert_array_equal(scores, [[-1.0, 1.0, LOWEST, 4.0, LOWEST]])


def test_the_prefix_mask_holds_at_the_first_step_only():
    mask = np.array([[1, 0, 1]], dtype=np.int32)
    first, later = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    processors = Processors(eos=0, prefix_vocab_mask=mask)
    processors.apply(first, np.zeros((2, 1), np.int32), 1)
    processors.apply(later, np.zeros((2, 2), np.int32), 2)
    assert (first[:, 1] == LOWEST).all() and (first[:, [0, 2]] == 0).all()  # both beams of the entry
    assert (later == 0).all()


def test_minstd_rand0_draws_the_c_libraries_numbers():
    """std::minstd_rand0 seeded with 1: 16807, 282475249, 1622650073 (x <- 16807 x mod 2^31 - 1); its 10000th
    number is 1043618065, the value the C++ standard requires."""
    engine = MinstdRand0(1)
    assert [engine.draw() for _ in range(3)] == [16807, 282475249, 1622650073]
    engine = MinstdRand0(1)
    for _ in range(9999):
        engine.draw()
    assert engine.draw() == 1043618065


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_minstd_rand0_seeds_that_are_zero_modulo_the_modulus_start_at_one(seed):
    assert MinstdRand0(seed).draw() == 16807
