"""The library's public layers (importing registers them for `.keras` loading)."""

from compgen_tf.layers.g_attention import GAttention
from compgen_tf.layers.g_decode import GDecode
from compgen_tf.layers.g_embed import GEmbed
from compgen_tf.layers.g_lstm_cell import GLSTMCell
from compgen_tf.layers.group_conv import GroupConv
from compgen_tf.layers.key_value_memory import KeyValueMemory
from compgen_tf.layers.masked_attention import MASKED_SCORE, masked_softmax
from compgen_tf.layers.relative_attention import RelativeAttention
from compgen_tf.layers.stack_lstm_cell import StackLSTMCell
from compgen_tf.layers.syntax_shift import SyntaxShift
from compgen_tf.layers.tied_rows_embedding import TiedRowsEmbedding
from compgen_tf.layers.token_and_position_embedding import TokenAndPositionEmbedding
from compgen_tf.layers.transformer_decoder_layer import TransformerDecoderLayer
from compgen_tf.layers.transformer_encoder_layer import TransformerEncoderLayer
from compgen_tf.layers.weighted_automaton import WeightedAutomaton
from compgen_tf.layers.word_noise import WordNoise

__all__ = ["GAttention", "GDecode", "GEmbed", "GLSTMCell", "GroupConv", "KeyValueMemory", "StackLSTMCell",
           "SyntaxShift", "TiedRowsEmbedding", "WeightedAutomaton", "WordNoise", "MASKED_SCORE",
           "masked_softmax",
           "RelativeAttention", "TokenAndPositionEmbedding", "TransformerDecoderLayer",
           "TransformerEncoderLayer"]
