"""Encoded SCAN splits and their length-bucketed batches (see `training.batches`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from compgen_tf.tokens import PAD_ID


@dataclasses.dataclass
class EncodedSplit:
    """One split as padded id arrays, plus its strings for error reports.

    Attributes:
        commands, actions: the raw strings, in split order.
        source_ids: int32 (n, source_length), as the model's preprocessor makes them.
        target_ids: int32 (n, target_length), actions + `<eos>`, `<pad>` after.
    """

    commands: list
    actions: list
    source_ids: np.ndarray
    target_ids: np.ndarray

    def __len__(self):
        return len(self.commands)

    @property
    def target_lengths(self) -> np.ndarray:
        """The number of target tokens of each example, `<eos>` included: (n,)."""
        return (self.target_ids != PAD_ID).sum(axis=1)


def encode_split(model, examples, unknown_words: str = "error") -> EncodedSplit:
    """Encodes (command, actions) pairs with the model's preprocessor, through `tf.data`.

    The pairs go through a `tf.data.Dataset` mapped by the preprocessor
    (`Seq2SeqPreprocessor.dataset_fn`) as one batch, so every row is padded to the split's
    longest, and the training batches (`epoch_batches`, `gather_batch`) cut rows out of it.
    `unknown_words="error"` (SCAN) raises the preprocessor's `UnknownTokenError` naming any
    source word outside the vocabulary (or its error for an empty, over-long or
    ungrammatical command); `"unk"` (natural text, whose test sentences have words
    training never saw) encodes it as `<unk>`. With `"error"` a target word outside the
    vocabulary is a `UnknownTokenError` too; with `"unk"` it is `<unk>`, which no
    prediction matches.
    """
    if not examples:
        raise ValueError("cannot encode an empty split")
    if unknown_words not in ("error", "unk"):
        raise ValueError(f"unknown_words must be 'error' or 'unk', got {unknown_words!r}")
    commands = [c for c, _ in examples]
    actions = [a for _, a in examples]
    preprocessor = model.preprocessor
    if unknown_words == "error":
        preprocessor.check_commands(commands)
        preprocessor.check_actions(actions)
    pairs = tf.data.Dataset.from_tensor_slices({"commands": tf.constant(commands, tf.string),
                                                "actions": tf.constant(actions, tf.string)})
    # With "unk" the preprocessor must keep a row that holds an unknown word (`<unk>` in
    # its place): by default it makes such a row the empty command, as serving answers it.
    batch = pairs.batch(len(examples)).map(preprocessor.dataset_fn(unknown_words))
    source_ids, target_ids = batch.get_single_element()
    return EncodedSplit(commands, actions, source_ids.numpy(), target_ids.numpy())


def epoch_batches(split: EncodedSplit, batch_size: int, seed: int, epoch: int,
                  length_bucket: int = 8):
    """The batches of one epoch as lists of example indices, deterministic in (seed, epoch).

    Examples are shuffled, cut into chunks of 50 batches, sorted by target length
    inside each chunk, batched, and the batches shuffled again: padding shrinks
    while every epoch still mixes lengths.
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(split))
    lengths = split.target_lengths
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        part = order[start:start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def gather_batch(split: EncodedSplit, indices, length_bucket: int = 8):
    """Source and target ids of `indices`, trimmed to a multiple of `length_bucket`.

    Rounding the padded length to a few bucket sizes bounds the number of
    distinct shapes while wasting little compute on padding.
    """
    source = split.source_ids[indices]
    target = split.target_ids[indices]
    return (_trim(source, length_bucket), _trim(target, length_bucket))


def _trim(ids, bucket):
    longest = int((ids != PAD_ID).sum(axis=1).max())
    width = min(ids.shape[1], -(-longest // bucket) * bucket)
    return ids[:, :width]
