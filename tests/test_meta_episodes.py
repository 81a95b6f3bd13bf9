import itertools

import numpy as np
import pytest

from tfds_scan import episodes, grammar, splits


def _undo(episode, slots_words, slots_actions):
    """Maps an episode's words and actions back to the places they took (slot i <-> mapping[i])."""
    words = {word: slot for slot, (word, _) in zip(slots_words, episode.mapping)}
    actions = {action: slot for slot, (_, action) in zip(slots_actions, episode.mapping)}
    def undo(pairs):
        return [(" ".join(words.get(w, w) for w in c.split()),
                 " ".join(actions.get(a, a) for a in y.split())) for c, y in pairs]
    return (undo(zip(episode.support_commands, episode.support_actions)),
            undo(zip(episode.query_commands, episode.query_actions)))


def _training(task, count, seed=0):
    return [episodes.training_episode(task, seed, i) for i in range(count)]


def test_mutual_exclusivity_bijections_split_19_5():
    bijections = episodes.me_bijections()
    assert len(bijections["train"]) == 19 and len(bijections["test"]) == 5
    everything = set(bijections["train"]) | set(bijections["test"])
    assert len(everything) == 24
    for bijection in everything:
        assert sorted(w for w, _ in bijection) == sorted(episodes.ME_WORDS)
        assert sorted(c for _, c in bijection) == sorted(episodes.ME_OUTPUTS)


def test_mutual_exclusivity_training_episodes():
    test_bijections = set(episodes.me_bijections()["test"])
    withheld_words = set()
    for episode in _training("mutual_exclusivity", 300):
        assert episode.mapping not in test_bijections
        meaning = dict(episode.mapping)
        assert len(episode.support_commands) == 3
        assert all(meaning[c] == a for c, a in zip(episode.support_commands,
                                                    episode.support_actions))
        (withheld,) = set(episodes.ME_WORDS) - set(episode.support_commands)
        withheld_words.add(withheld)
        assert len(set(episode.query_commands)) == 20
        for query, target in zip(episode.query_commands, episode.query_actions):
            assert 2 <= len(query.split()) <= 6
            assert target == " ".join(meaning[w] for w in query.split())
        assert any(withheld in q.split() for q in episode.query_commands)
    assert withheld_words == set(episodes.ME_WORDS)


def test_mutual_exclusivity_test_episodes_use_only_held_out_bijections():
    test = episodes.test_episodes("mutual_exclusivity")
    assert len(test) == 20
    assert {e.mapping for e in test} == set(episodes.me_bijections()["test"])
    assert all(len(e.support_commands) == 3 and len(e.query_commands) == 20 for e in test)


def test_episodes_are_reproducible_and_seeded():
    for task in episodes.TASK_NAMES:
        assert episodes.training_episode(task, 3, 7) == episodes.training_episode(task, 3, 7)
        assert episodes.training_episode(task, 3, 7) != episodes.training_episode(task, 4, 7)
    validation = episodes.validation_episodes("add_jump_permutation", 5)
    assert validation == episodes.validation_episodes("add_jump_permutation", 5)
    training = {episodes.training_episode("add_jump_permutation", 0, i) for i in range(50)}
    assert not training & set(validation)


def test_add_jump_permutation_never_uses_the_true_mapping():
    identity = tuple(zip(episodes.SCAN_VERBS, episodes.SCAN_VERB_ACTIONS))
    mappings = set()
    for episode in _training("add_jump_permutation", 400):
        assert episode.mapping != identity
        assert [w for w, _ in episode.mapping] == list(episodes.SCAN_VERBS)
        assert sorted(a for _, a in episode.mapping) == sorted(episodes.SCAN_VERB_ACTIONS)
        mappings.add(episode.mapping)
        assert len(episode.support_commands) == 20 and len(episode.query_commands) == 20
        assert not set(episode.support_commands) & set(episode.query_commands)
    assert len(mappings) == 23  # every other permutation occurs
    for episode in _training("add_jump_permutation", 20):
        support, queries = _undo(episode, episodes.SCAN_VERBS, episodes.SCAN_VERB_ACTIONS)
        assert all(grammar.interpret(c) == y for c, y in support + queries)


def test_add_jump_augmentation_never_pairs_jump_with_its_action():
    words, actions = set(), set()
    for episode in _training("add_jump_augmentation", 1500):
        assert ("jump", "I_JUMP") not in episode.mapping
        assert len({w for w, _ in episode.mapping}) == 4
        assert len({a for _, a in episode.mapping}) == 4
        words |= {w for w, _ in episode.mapping}
        actions |= {a for _, a in episode.mapping}
    assert "jump" in words and "I_JUMP" in actions
    assert words == set(episodes.SCAN_VERBS + episodes.EXTRA_PRIMITIVES)
    assert actions == set(episodes.SCAN_VERB_ACTIONS + episodes.EXTRA_ACTIONS)
    for episode in _training("add_jump_augmentation", 20):
        support, queries = _undo(episode, episodes.SCAN_VERBS, episodes.SCAN_VERB_ACTIONS)
        assert all(grammar.interpret(c) == y for c, y in support + queries)


def test_around_right_never_pairs_right_with_its_turn():
    for episode in _training("around_right", 1000):
        assert ("right", "I_TURN_RIGHT") not in episode.mapping
        assert len(episode.mapping) == 2
        assert len({w for w, _ in episode.mapping}) == 2
    for episode in _training("around_right", 20):
        support, queries = _undo(episode, episodes.SCAN_DIRECTIONS, episodes.SCAN_TURNS)
        assert all(grammar.interpret(c) == y for c, y in support + queries)


def test_length_episodes_split_by_action_count():
    for episode in _training("length", 10):
        assert len(episode.support_commands) == 100 and len(episode.query_commands) == 20
        assert all(len(y.split()) < 12 for y in episode.support_actions)
        assert all(12 <= len(y.split()) <= 22 for y in episode.query_actions)
    # The development version: the same shape inside the length training data.
    dev = splits.split_examples("length_dev")
    dev_train, length_test = set(dev["train"]), {c for c, _ in splits.split_examples("length")["test"]}
    for episode in _training("length_dev", 10):
        assert len(episode.support_commands) == 100 and len(episode.query_commands) == 20
        assert all(len(y.split()) <= 8 for y in episode.support_actions)
        assert all(9 <= len(y.split()) <= 16 for y in episode.query_actions)
        assert not (set(episode.support_commands) | set(episode.query_commands)) & length_test
    sets = episodes.test_episodes("length_dev", support_sets=2)
    assert [list(zip(e.query_commands, e.query_actions)) for e in sets] == [dev["test"]] * 2
    assert all(set(zip(e.support_commands, e.support_actions)) <= dev_train for e in sets)


def test_scan_test_episodes():
    (jump,) = episodes.test_episodes("add_jump_permutation")
    assert episodes.test_episodes("add_jump_augmentation") == [jump]
    assert jump.support_commands == ("walk", "look", "run", "jump")
    assert jump.support_actions == ("I_WALK", "I_LOOK", "I_RUN", "I_JUMP")
    assert list(zip(jump.query_commands, jump.query_actions)) == \
        splits.split_examples("addprim_jump")["test"]
    assert len(jump.query_commands) == 7706
    (around,) = episodes.test_episodes("around_right")
    assert around.support_commands == ("turn left", "turn right")
    assert around.support_actions == ("I_TURN_LEFT", "I_TURN_RIGHT")
    assert len(around.query_commands) == len(splits.split_examples("template_around_right")["test"])
    (length,) = episodes.test_episodes("length")
    train = set(splits.split_examples("length")["train"])
    assert len(length.support_commands) == 100
    assert set(zip(length.support_commands, length.support_actions)) <= train
    assert len(length.query_commands) == 3920
    # The authors' protocol: the same queries against several support sets, the first of
    # which is the single set above.
    sets = episodes.test_episodes("length", support_sets=3)
    assert sets[0] == length and len({e.support_commands for e in sets}) == 3
    assert all(e.query_commands == length.query_commands for e in sets)
    assert all(set(zip(e.support_commands, e.support_actions)) <= train for e in sets)
    with pytest.raises(ValueError, match="length tasks only"):
        episodes.test_episodes("around_right", support_sets=2)
    with pytest.raises(ValueError, match="positive integer"):
        episodes.test_episodes("length", support_sets=0)
    # ... and a configuration that asks for them is refused before anything trains.
    from compgen_tf.experiments.config import ConfigError
    from compgen_tf.experiments.episodes import EPISODES
    from compgen_tf.experiments.scan import SCAN
    with pytest.raises(ConfigError, match="length tasks only"):
        EPISODES.resolve_config("meta_seq2seq", "around_right", None,
                                ["data.test_support_sets=3"])
    assert EPISODES.resolve_config("meta_seq2seq", "length", None, [
        "data.test_support_sets=5"]).data.test_support_sets == 5
    with pytest.raises(ConfigError, match="applies to meta seq2seq's length tasks"):
        SCAN.resolve_config("seq2seq", "simple", None, ["data.test_support_sets=2"])


def test_vocabularies_cover_every_episode():
    for task in episodes.TASK_NAMES:
        words, actions = episodes.vocabularies(task)
        for episode in _training(task, 30) + episodes.test_episodes(task)[:1]:
            texts = itertools.chain(episode.support_commands, episode.query_commands)
            assert {w for t in texts for w in t.split()} <= set(words)
            texts = itertools.chain(episode.support_actions, episode.query_actions)
            assert {a for t in texts for a in t.split()} <= set(actions)


def test_unknown_task_is_a_clear_error():
    with pytest.raises(ValueError, match="valid tasks"):
        episodes.training_episode("add_jump", 0, 0)
    with pytest.raises(ValueError, match="valid tasks"):
        episodes.vocabularies("nope")


def test_standard_seq2seq_batches_come_from_the_ordinary_split():
    fit = set(splits.load_examples("addprim_jump", "fit"))
    validation = set(splits.load_examples("addprim_jump", "validation"))
    for episode in _training("add_jump_standard", 5):
        assert episode.support_commands == () and len(episode.query_commands) == 40
        assert set(zip(episode.query_commands, episode.query_actions)) <= fit
    for episode in episodes.validation_episodes("add_jump_standard", 3):
        assert set(zip(episode.query_commands, episode.query_actions)) <= validation
    assert episodes.test_episodes("add_jump_standard") == \
        episodes.test_episodes("add_jump_permutation")
