"""`compgen_tf.training.evaluation.evaluate_split`: exact match over a split, decoded in
batches of rows of about the same length, reported in the split's order."""

import keras
import numpy as np
import pytest

from compgen_tf import registry
from compgen_tf.training.data import EncodedSplit, encode_split
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.tokens import PAD_ID


class _Echo:
    """A stand-in model whose greedy output is its source; it records the batches."""

    def __init__(self):
        self.batches = []

    def _greedy_decode_graph(self, source):
        self.batches.append(np.array(source))
        return keras.ops.convert_to_tensor(source)

    def decode_actions(self, predicted):
        words = [" ".join(str(t) for t in row if t != PAD_ID)
                 for row in keras.ops.convert_to_numpy(predicted)]
        return keras.ops.convert_to_tensor(np.array(words, dtype=object).astype(bytes)), None


def _padded(rows, width):
    return np.array([row + [PAD_ID] * (width - len(row)) for row in rows], dtype="int32")


def test_batches_go_shortest_source_first_and_the_scores_come_back_in_the_split_order():
    sources = [[5, 6, 7, 8], [5], [6, 7], [5, 5, 5], [7], [8, 8]]
    targets = [[5, 6, 7, 8], [9], [6, 7], [5, 5, 6], [7], [8, 8]]
    split = EncodedSplit(commands=[str(s) for s in sources], actions=[str(t) for t in targets],
                         source_ids=_padded(sources, 4), target_ids=_padded(targets, 4))
    model = _Echo()
    result = evaluate_split(model, split, batch_size=4)
    np.testing.assert_array_equal(result.correct, [True, False, True, False, True, True])
    assert result.predictions == ["5 6 7 8", "5", "6 7", "5 5 5", "7", "8 8"]
    lengths = [list((batch != PAD_ID).sum(axis=1)) for batch in model.batches]
    # Stable: rows of one length keep the split's order ([5] before [7]).
    assert lengths == [[1, 1, 2, 2], [3, 4]]
    np.testing.assert_array_equal(model.batches[0][:, 0], [5, 7, 6, 8])
    assert evaluate_split(_Echo(), split, keep_predictions=False).predictions == []
    assert evaluate_split(_Echo(), split, batch_size=1).predictions == result.predictions


@pytest.mark.parametrize("name", ["seq2seq", "transformer"])
def test_a_real_model_scores_the_same_rows_in_any_batching(name):
    """Each row is decoded on its own: batches of 3 by length give the outputs of batches
    of one (an untrained model, whose outputs differ from row to row)."""
    keras.utils.set_random_seed(0)
    small = {"seq2seq": dict(embedding_dim=8, hidden_units=8),
             "transformer": dict(width=8, num_layers=1, num_heads=2, feedforward_dim=8)}
    model = registry.build(name, max_output_length=6, **small[name])
    examples = [("jump twice and walk left", "I_JUMP I_JUMP I_TURN_LEFT I_WALK"),
                ("walk", "I_WALK"), ("jump left", "I_TURN_LEFT I_JUMP"),
                ("look and run", "I_LOOK I_RUN"), ("run thrice", "I_RUN I_RUN I_RUN"),
                ("turn left", "I_TURN_LEFT"), ("look around right", "I_TURN_RIGHT I_LOOK")]
    split = encode_split(model, examples)
    one_by_one = evaluate_split(model, split, batch_size=1)
    by_length = evaluate_split(model, split, batch_size=3)
    assert len(set(one_by_one.predictions)) > 1
    assert by_length.predictions == one_by_one.predictions
    np.testing.assert_array_equal(by_length.correct, one_by_one.correct)


def test_unk_scoring_keeps_a_sentence_with_an_unknown_word_and_serving_refuses_it():
    """`encode_split(..., "unk")` (translation and COGS scoring) encodes a word training never
    saw as `<unk>` in its place; the sentence keeps its other words. (From 2026-12-01 to
    2026-12-07 such a sentence was encoded as the empty command: 227 of the 1,191
    English-French test sentences were scored from `<sos> <eos>`.) Serving's default still
    answers it with a per-row error."""
    from compgen_tf.models.preprocessor import UnknownTokenError
    from compgen_tf.tokens import EOS_ID, SOS_ID, UNK_ID

    model = registry.build_model("syntactic_attention", dict(
        semantic_dim=8, syntax_embedding_dim=8, syntax_units=8, encoder_units=8,
        command_grammar=None), ["i", "am", "."], ["je", "suis", "."])
    examples = [("i am sober .", "je suis sobre ."), ("i am .", "je suis .")]
    split = encode_split(model, examples, unknown_words="unk")
    ids = model.preprocessor.source_id
    np.testing.assert_array_equal(split.source_ids, [
        [SOS_ID, ids("i"), ids("am"), UNK_ID, ids("."), EOS_ID],
        [SOS_ID, ids("i"), ids("am"), ids("."), EOS_ID, PAD_ID]])
    assert split.target_ids[0].tolist() == [model.preprocessor.target_id("je"),
                                            model.preprocessor.target_id("suis"), UNK_ID,
                                            model.preprocessor.target_id("."), EOS_ID]
    with pytest.raises(UnknownTokenError, match="sober"):
        encode_split(model, examples)
    served, errors = model.encode_commands(["i am sober ."])
    assert served.numpy().tolist() == [[SOS_ID, EOS_ID]]
    assert "sober" in errors.numpy()[0].decode()
    kept, errors = model.preprocessor.encode_commands(["i am sober ."], unknown_words="unk")
    assert kept.numpy().tolist() == [split.source_ids[0].tolist()] and errors.numpy()[0] == b""
    with pytest.raises(ValueError, match="unknown_words must be 'error' or 'unk'"):
        model.preprocessor.dataset_fn("ignore")
