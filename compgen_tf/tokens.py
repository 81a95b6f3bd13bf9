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
