"""One Keras backend's side of the cross-backend checks of `tests/test_backends.py`.

    KERAS_BACKEND=jax python tests/backend_worker.py save OUT_DIR
        builds one functional model that uses every public layer, gives it weights drawn by
        NumPy from a fixed seed (the same on every backend), and writes
        OUT_DIR/<backend>.keras and OUT_DIR/<backend>.npz (its outputs on fixed inputs);
        then builds each seq2seq family's backbone, small, with NumPy-drawn weights, and
        writes OUT_DIR/backbones_<backend>.npz: its logits on fixed ids (and for two of
        them, greedy decoding's encoder output) and the gradient of its loss, read off one
        `fit` step of plain SGD (dropout off, so no backend draws). On JAX it then fits the seq2seq backbone two steps with dropout on, which
        must run (the decoders' scan carries the seed state) and move the weights.
    KERAS_BACKEND=torch python tests/backend_worker.py load OUT_DIR FILE.keras [...]
        loads each file and writes OUT_DIR/<file stem>_on_<backend>.npz.

Run as a script in its own process: a process holds one Keras backend. For TensorFlow's
side, `tests/test_backends.py` calls `main` in the suite's own process instead.
"""

import sys
from pathlib import Path

import keras
import numpy as np

from compgen_tf import models
from compgen_tf.groups import Symmetry
from compgen_tf.layers import (GAttention, GDecode, GEmbed, GLSTMCell, GroupConv,
                               KeyValueMemory, RelativeAttention, StackLSTMCell,
                               TokenAndPositionEmbedding, TransformerDecoderLayer,
                               TransformerEncoderLayer, WeightedAutomaton)
from compgen_tf.tokens import EOS_ID, SOS_ID

SOURCE = ["<pad>", "<unk>", "<sos>", "<eos>", "jump", "look", "run", "walk", "twice", "and"]
TARGET = ["<pad>", "<unk>", "<sos>", "<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]
ORDER, CHANNELS, UNITS, TIME = 4, 3, 2, 5


def every_layer_model() -> keras.Model:
    ids = keras.Input(shape=(TIME,), dtype="int32", name="ids")
    embedded = GEmbed("verb", SOURCE, CHANNELS)(ids)
    convolved = GroupConv("verb", CHANNELS)(embedded)
    flat = keras.layers.Reshape((TIME, ORDER * CHANNELS))(convolved)
    states = keras.layers.RNN(GLSTMCell("verb", UNITS), return_sequences=True)(flat)
    states = keras.layers.Reshape((TIME, ORDER, UNITS))(states)
    logits = GDecode("verb", TARGET)(states)
    context, weights = GAttention()(states[:, -1], states)
    stack = keras.layers.RNN(StackLSTMCell(3, depth=4), return_sequences=True)(logits)
    read, _ = KeyValueMemory()(stack, stack, logits)
    count = WeightedAutomaton(len(SOURCE), 3)(ids)
    # The Transformer's layers: learned positions, relative keys, an encoder and a decoder layer.
    embedded = TokenAndPositionEmbedding(len(SOURCE), 4, positions="learned", max_positions=8)(ids)
    attended = RelativeAttention(num_heads=2, key_dim=2, max_distance=2)(embedded, embedded)
    encoded = TransformerEncoderLayer(4, 2, 6, max_distance=2)(attended)
    decoded = TransformerDecoderLayer(4, 2, 6, max_distance=2)(embedded, encoded)
    return keras.Model(ids, [logits, context, weights, stack, read, count, decoded])


def inputs() -> np.ndarray:
    return np.random.default_rng(1).integers(0, len(SOURCE), size=(3, TIME)).astype("int32")


def outputs(model) -> dict:
    return {f"output_{i}": keras.ops.convert_to_numpy(y) for i, y in enumerate(model(inputs()))}


def backbone(family: str, dropout: float) -> keras.Model:
    """A small backbone of `family` on the vocabularies above."""
    if family.startswith("seq2seq"):
        # With the count options (counting_seq2seq's count_attention among them) the decoder
        # also reads the actions left, counted down from each target's length.
        options = family == "seq2seq_count_options"
        return models.AttentionSeq2SeqBackbone(len(SOURCE), len(TARGET), embedding_dim=4,
                                               hidden_units=3, dropout=dropout,
                                               count_input=options, count_cap=4 if options else 0,
                                               count_attention=options)
    if family.startswith("syntactic_attention"):
        options = family == "syntactic_attention_boundary_options"
        return models.SyntacticAttentionBackbone(
            len(SOURCE), len(TARGET), semantic_dim=4, syntax_embedding_dim=3, syntax_units=3,
            encoder_units=3, dropout=dropout, learned_boundary_semantics=not options,
            end_only_boundaries=options, first_step_on_words=options,
            # With the options, `jump` reads the mean syntactic row of `look` and `walk`.
            syntax_tied_ids=[4] if options else (), syntax_lender_ids=[5, 7] if options else ())
    if family == "equivariant":  # no dropout: it would break equivariance
        return models.EquivariantSeq2SeqBackbone(Symmetry.for_scan("verb").get_config(),
                                                 SOURCE, TARGET, embedding_dim=2,
                                                 hidden_units=2)
    if family == "transformer":  # relative keys, the one layer applied twice
        return models.TransformerBackbone(len(SOURCE), len(TARGET), width=4, num_layers=2,
                                          num_heads=2, feedforward_dim=6, dropout=dropout,
                                          positions="relative", max_relative_distance=2,
                                          universal=True)
    return models.MetaSeq2SeqBackbone(len(SOURCE) + len(TARGET), len(SOURCE) + len(TARGET),
                                      embedding_dim=4, hidden_units=3, dropout=dropout)


BACKBONES = ("seq2seq", "seq2seq_count_options", "syntactic_attention",
             "syntactic_attention_boundary_options", "equivariant", "meta_seq2seq",
             "transformer")


def backbone_batch(family: str):
    """Fixed (inputs, labels): ids past the special tokens, one padded target row."""
    rng = np.random.default_rng(2)

    def ids(rows, length, size):
        return rng.integers(4, size, (rows, length)).astype("int32")

    inputs = {"source_ids": ids(3, TIME, len(SOURCE)), "target_ids": ids(3, 6, len(TARGET))}
    labels = ids(3, 6, len(TARGET))
    labels[0, 4:] = 0  # padding, ignored by the loss
    if family == "seq2seq_count_options":  # rows of other lengths: other counts left
        inputs["target_ids"][0, 4:] = 0
    if family == "syntactic_attention_boundary_options":  # boundaries, which it reads apart
        inputs["source_ids"][:, 0], inputs["source_ids"][:, -1] = SOS_ID, EOS_ID
    if family == "meta_seq2seq":
        size = len(SOURCE) + len(TARGET)
        inputs.update(support_command_ids=ids(4, TIME, size), support_action_ids=ids(4, 6, size))
    return inputs, labels


def backbone_results() -> dict:
    results = {}
    for family in BACKBONES:
        # Layer names (and so weight paths) count the layers made before in the process;
        # starting each family afresh makes them the same on every backend.
        keras.backend.clear_session()
        model = backbone(family, dropout=0.0)
        inputs, labels = backbone_batch(family)
        # Drawn in the order of the weights' paths: the order of `model.weights` is not the
        # same on every backend (PyTorch's tracking differs), the paths are.
        paths = {id(w): w.path for w in model.weights}
        assert len(set(paths.values())) == len(paths), sorted(paths.values())
        rng = np.random.default_rng(3)
        for weight in sorted(model.weights, key=lambda w: paths[id(w)]):
            weight.assign(rng.normal(scale=0.5, size=weight.shape).astype("float32"))
        before = {id(w): keras.ops.convert_to_numpy(w) for w in model.trainable_weights}
        results[f"{family}_logits"] = keras.ops.convert_to_numpy(model(inputs))
        if family == "transformer":
            # Greedy decoding through the sampler, the key/value cache as its loop state.
            ids, attention = model.decoder.greedy(model.encode(inputs["source_ids"]), 6)
            results[f"{family}_greedy_ids"] = keras.ops.convert_to_numpy(ids)
            results[f"{family}_greedy_attention"] = keras.ops.convert_to_numpy(attention)
        if family in ("seq2seq", "syntactic_attention"):
            # Greedy decoding's encoder: `bidirectional_lstm`'s own loop, not the layer's.
            results[f"{family}_encoded"] = keras.ops.convert_to_numpy(
                model.encode(inputs["source_ids"])[0])
        # One step of SGD with learning rate 1: the weights move by minus the gradient.
        # One step does not repay tracing it, except on JAX, whose eager scan is slower still.
        model.compile(optimizer=keras.optimizers.SGD(1.0),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                      ignore_class=0),
                      run_eagerly=keras.backend.backend() != "jax")
        if family == "meta_seq2seq":  # support and queries differ in rows: an episode a step
            model.fit(_repeat(inputs, labels), steps_per_epoch=1, verbose=0)
        else:
            model.fit(inputs, labels, batch_size=len(labels), shuffle=False, verbose=0)
        for weight in model.trainable_weights:
            results[f"{family}_gradient:{paths[id(weight)]}"] = (
                before[id(weight)] - keras.ops.convert_to_numpy(weight))
        if family == "seq2seq" and keras.backend.backend() == "jax":
            # JAX runs the decoders' loop as a scan that carries the dropout seeds (the
            # base class's loop, the same for every family).
            noisy = backbone(family, dropout=0.5)
            noisy.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=0))
            noisy(inputs)
            seed = noisy.decoder.dropout.seed_generator.state  # [seed, draws so far]
            start = [keras.ops.convert_to_numpy(v) for v in [seed] + noisy.trainable_weights]
            noisy.fit(inputs, labels, batch_size=len(labels), epochs=2, verbose=0)
            after = [keras.ops.convert_to_numpy(v) for v in [seed] + noisy.trainable_weights]
            # At least one draw per decoder step (two steps of 6): a seed that stood still
            # would mean every step reused the same dropout mask.
            assert after[0][1] - start[0][1] >= 2 * 6, (start[0], after[0])
            assert any(not np.array_equal(a, b) for a, b in zip(start[1:], after[1:])), \
                "fit with dropout left the weights unchanged"
    return results


def _repeat(inputs, labels):
    while True:
        yield inputs, labels


def main(argv):
    backend = keras.backend.backend()
    # `save OUT [FILE...]`: save this backend's files, then load FILEs (saved on other
    # backends); `load OUT FILE...`: load only. One process does both, as each one costs
    # the imports of a backend.
    mode, out = argv[0], Path(argv[1])
    if mode not in ("save", "load"):
        raise SystemExit(f"unknown mode {mode!r}: save or load")
    if mode == "save":
        # Layer names count the layers made before in the process: the suite's own ones,
        # when `tests/test_backends.py` calls this for TensorFlow.
        keras.backend.clear_session()
        model = every_layer_model()
        rng = np.random.default_rng(0)
        model.set_weights([rng.normal(scale=0.5, size=w.shape).astype("float32")
                           for w in model.weights])
        model.save(out / f"{backend}.keras")
        np.savez(out / f"{backend}.npz", **outputs(model))
        np.savez(out / f"backbones_{backend}.npz", **backbone_results())
    for path in map(Path, argv[2:]):
        model = keras.saving.load_model(path)
        np.savez(out / f"{path.stem}_on_{backend}.npz", **outputs(model))


if __name__ == "__main__":
    main(sys.argv[1:])
