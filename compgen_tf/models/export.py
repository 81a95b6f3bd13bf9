"""`export_model`: a trained SCAN or meta seq2seq model as a TF Serving SavedModel.

The command line is `python -m compgen_tf export` (`compgen_tf.cli.export`, whose docstring
describes the signatures); this module is what it calls, apart from the argument parsing, so
that `export --help` needs no TensorFlow.
"""

from __future__ import annotations

from pathlib import Path

import keras
import tensorflow as tf

from compgen_tf.models.train_step import AUTOGRAPH

SIGNATURE_INPUT = "commands"
EPISODE_INPUTS = ("support_commands", "support_actions", "query_commands")
# `xla_single_command`: widths (in ids) compiled without padding; wider commands are padded.
EXACT_WIDTHS = 16


def export_model(model, out_dir, xla_single_command: bool = False) -> Path:
    """Writes `model` (a `Seq2SeqModel`) as a SavedModel with a `serving_default` signature;
    `xla_single_command`: decode one-command calls through an XLA-compiled function."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty; TF Serving versions are immutable, "
                              "export to a new version directory")
    if not (hasattr(model, "serve") or hasattr(model, "serve_episode")):
        raise TypeError(f"{type(model).__name__} has no string signature to export: only the "
                        f"SCAN models and meta seq2seq translate strings (the toy-task models "
                        f"read symbol ids)")
    if xla_single_command and hasattr(model, "serve_episode"):
        raise TypeError("--xla-single-command applies to the SCAN models; a meta seq2seq "
                        "call is one episode, not one command")
    if not model.built:
        model.build()

    if hasattr(model, "serve_episode"):  # a meta seq2seq learner: one episode per call
        strings = [tf.TensorSpec([None], tf.string, name=name) for name in EPISODE_INPUTS]

        @tf.function(input_signature=strings, autograph=AUTOGRAPH)
        def serve(support_commands, support_actions, query_commands):
            return model.serve_episode(*map(checked_vector, (support_commands, support_actions,
                                                             query_commands), EPISODE_INPUTS))
    elif xla_single_command:
        serve = _serve_single_commands_with_xla(model)
    else:
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=SIGNATURE_INPUT)],
                     autograph=AUTOGRAPH)
        def serve(commands):
            return model.serve(checked_vector(commands))

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint("serving_default", serve)
    archive.write_out(str(out_dir), verbose=False)
    return out_dir


def checked_vector(strings, name=SIGNATURE_INPUT):
    """`strings`, checked at run time to be a vector (shape [batch]).

    A loaded signature checks the dtype of what it is given but not its shape, and TF
    Serving feeds the request's tensor as it is: a scalar or a 2-D input would otherwise
    fail deep inside the tokenizer. `EnsureShape` stays in the optimized graph (an assertion
    on `tf.rank` is folded away, the rank being known from the signature) and names the
    input: "Shape of tensor commands [1,2] is not compatible with expected shape [?]".

    Args:
        strings: a string tensor, declared [None] by the signature.
        name: the input's name, for the message.

    Returns:
        `strings`, once its shape has been checked.
    """
    return tf.ensure_shape(strings, [None], name=f"{name}_is_a_vector")


def _serve_single_commands_with_xla(model):
    """The serving function of `export_model(..., xla_single_command=True)`."""
    # Padding changes no translation (the encoders mask it), so a command padded to a fixed
    # width reuses the function compiled for that width. The encoders and the attention
    # still step over the padding, which a single command pays for: every width up to
    # EXACT_WIDTHS is compiled as it is (SCAN's commands, 3 to 11 ids, are never padded),
    # wider ones are padded to the next doubling, up to the longest input (<sos>, words,
    # <eos>). One `switch_case` picks the width: a `tf.case` over the widths nests one
    # `cond` per width, and those calls cost more than the padding saves
    # (serving/README.md, "Latency").
    longest = model.max_input_length + 2
    widths = list(range(1, min(EXACT_WIDTHS, longest) + 1))
    while widths[-1] < longest:
        widths.append(min(2 * widths[-1], longest))

    @tf.function(jit_compile=True, autograph=AUTOGRAPH)
    def decode_padded(source_ids):
        return model.greedy_decode(source_ids)

    def padded_to(width, source_ids):
        return lambda: decode_padded(tf.pad(source_ids,
                                            [[0, 0], [0, width - tf.shape(source_ids)[1]]]))

    def decode_one(source_ids):
        # The index of the narrowest width that holds the command.
        index = tf.reduce_sum(tf.cast(tf.constant(widths) < tf.shape(source_ids)[1], tf.int32))
        return tf.switch_case(index, [padded_to(width, source_ids) for width in widths])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=SIGNATURE_INPUT)],
                 autograph=AUTOGRAPH)
    def serve(commands):
        source_ids, error = model.encode_commands(checked_vector(commands))
        output_ids = tf.cond(tf.equal(tf.shape(source_ids)[0], 1),
                             lambda: decode_one(source_ids),
                             lambda: model.greedy_decode(source_ids))
        return model.serving_outputs(output_ids, error)

    return serve
