"""The id layout of every vocabulary in the library: four special tokens, then the words.

0 `<pad>`, 1 `<unk>`, 2 `<sos>`, 3 `<eos>`, then the words in the order given, as
`keras.layers.StringLookup(mask_token=PAD, oov_token=UNK)` lays out `[SOS, EOS] + words`.
The vocabulary itself is `compgen_tf.models.preprocessor.Seq2SeqPreprocessor`; these
constants live in a base module because layers, decoding, models and training all read
them and `compgen_tf.layers` may not import `compgen_tf.models`.
"""

PAD = "<pad>"
UNK = "<unk>"
SOS = "<sos>"
EOS = "<eos>"
SPECIAL_TOKENS = (PAD, UNK, SOS, EOS)
PAD_ID, UNK_ID, SOS_ID, EOS_ID = range(4)


def pad_width(ids, multiple: int):
    """int32 ids (rows, width) right-padded with `<pad>` to a width that is a multiple of
    `multiple`.

    What JAX's jitted steps and decoders need: `jax.jit` compiles once per shape, so a
    stream of batches of many widths is padded to a few. A row is masked to its own length
    in every model, as in any batch of sequences of several lengths.
    """
    import numpy as np

    ids = np.asarray(ids, "int32")
    width = -(-ids.shape[1] // multiple) * multiple
    return np.pad(ids, [(0, 0), (0, width - ids.shape[1])], constant_values=PAD_ID)
