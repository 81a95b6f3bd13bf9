import pytest

from compgen_tf.vocabulary import EOS_ID, PAD_ID, SPECIAL_TOKENS, UnknownTokenError, Vocabulary


def test_layout_specials_first_then_sorted_words():
    vocab = Vocabulary.from_texts(["walk twice", "jump"], name="source")
    assert vocab.tokens == list(SPECIAL_TOKENS) + ["jump", "twice", "walk"]
    assert vocab.ids("walk twice") == [6, 5]
    assert vocab.text([6, 5, EOS_ID, 4]) == "walk twice"
    assert vocab.text([4, PAD_ID, 4]) == "jump jump"


def test_unknown_word_error_names_word_and_vocabulary():
    vocab = Vocabulary.from_texts(["walk"], name="source")
    with pytest.raises(UnknownTokenError, match=r"source vocabulary has no entry for \['dax', 'zup'\].*walk"):
        vocab.check_known(["walk dax", "zup"])


@pytest.mark.parametrize("words", [["a", "a"], ["<pad>"], ["two words"], [""]])
def test_bad_words_rejected(words):
    with pytest.raises(ValueError):
        Vocabulary(words)


def test_json_round_trip(tmp_path):
    vocab = Vocabulary(["x", "y"], name="target")
    vocab.save(tmp_path / "v.json")
    assert Vocabulary.load(tmp_path / "v.json") == vocab
