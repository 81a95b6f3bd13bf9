import numpy as np
import pytest

from compgen_tf.groups import (Group, Symmetry, WordAction, check_equivariance, ids_transform,
                               regular_transform, scores_transform)


def test_cyclic_group_table_inverse_and_division():
    z4 = Group.cyclic(4)
    assert z4.order == 4 and z4.identity == 0
    assert z4.compose(3, 2) == 1 and z4.inverse(1) == 3 and z4.inverse(0) == 0
    np.testing.assert_array_equal(z4.table[1], [1, 2, 3, 0])
    division = z4.left_division_table
    for g in z4.elements:
        for h in z4.elements:
            assert division[g, h] == z4.compose(z4.inverse(g), h)


def test_closure_from_generators_gives_the_symmetric_group():
    group, permutations = Group.from_generators([[1, 2, 0], [1, 0, 2]])
    assert group.order == 6
    np.testing.assert_array_equal(permutations[0], [0, 1, 2])
    assert len({tuple(p) for p in permutations}) == 6
    for g in group.elements:
        for h in group.elements:
            np.testing.assert_array_equal(permutations[group.compose(g, h)],
                                          permutations[g][permutations[h]])
    # S3 is not abelian.
    assert not np.array_equal(group.table, group.table.T)


def test_direct_product():
    product = Group.direct_product(Group.cyclic(4), Group.cyclic(2))
    assert product.order == 8
    # (a, b) = a * 2 + b: (3, 1) . (2, 1) = (1, 0).
    assert product.compose(3 * 2 + 1, 2 * 2 + 1) == 1 * 2 + 0
    assert np.array_equal(product.table, product.table.T)


@pytest.mark.parametrize("table, message", [
    ([[0, 1], [1, 1]], "repeats an element"),
    ([[1, 0], [0, 1]], "identity"),
    ([[0, 1, 2], [1, 0, 2], [2, 2, 0]], "repeats an element"),
    ([[0.0]], "dtype"),
    ([[0, 1], [1, 2]], "entries"),
])
def test_group_rejects_tables_that_are_not_groups(table, message):
    with pytest.raises(ValueError, match=message):
        Group(table)


def test_group_rejects_non_associative_latin_square():
    # A loop of order 5 with identity 0 that is not associative.
    table = [[0, 1, 2, 3, 4], [1, 0, 3, 4, 2], [2, 4, 0, 1, 3], [3, 2, 4, 0, 1],
             [4, 3, 1, 2, 0]]
    with pytest.raises(ValueError, match="associative"):
        Group(table)


def test_scan_symmetries_pair_input_and_output_words():
    verb = Symmetry.for_scan("verb")
    assert verb.group.order == 4
    assert [verb.input_action.act(g, "jump") for g in verb.group.elements] == \
        ["jump", "look", "run", "walk"]
    assert [verb.output_action.act(g, "I_JUMP") for g in verb.group.elements] == \
        ["I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]
    assert verb.input_action.act(1, "twice") == "twice"
    assert Symmetry.for_scan("direction").group.order == 2
    assert Symmetry.for_scan("trivial").group.order == 1
    both = Symmetry.for_scan("verb+direction")
    assert both.group.order == 8
    g = 2 * 2 + 1  # shift the verbs by 2 and swap the directions
    assert both.input_action.act(g, "walk") == "look" and both.input_action.act(g, "left") == \
        "right"
    assert both.output_action.act(g, "I_TURN_RIGHT") == "I_TURN_LEFT"
    with pytest.raises(ValueError, match="unknown SCAN symmetry"):
        Symmetry.for_scan("colour")


def test_symmetry_from_word_lists_and_config_round_trip():
    custom = Symmetry([["dax", "wif", "lug"]], [["RED", "GREEN", "BLUE"]])
    assert custom.group.order == 3 and custom.output_action.act(2, "RED") == "BLUE"
    assert Symmetry.from_config(custom.get_config()) == custom
    assert Symmetry.from_config("verb") == Symmetry.for_scan("verb")
    with pytest.raises(ValueError, match="same length"):
        Symmetry([["a", "b"]], [["A"]])
    with pytest.raises(ValueError, match="in pairs"):
        Symmetry([["a", "b"]], [])
    with pytest.raises(ValueError, match="share or repeat"):
        Symmetry([["a", "b"], ["b", "c"]], [["A", "B"], ["C", "D"]])


def test_action_on_a_vocabulary_and_orbits():
    verb = Symmetry.for_scan("verb")
    vocabulary = ["<pad>", "I_WALK", "I_JUMP", "I_TURN_LEFT", "I_RUN", "I_LOOK"]
    table = verb.output_action.on_vocabulary(vocabulary)
    assert vocabulary[table[1, vocabulary.index("I_JUMP")]] == "I_LOOK"
    assert vocabulary[table[1, vocabulary.index("I_WALK")]] == "I_JUMP"
    assert np.all(table[:, 0] == 0) and np.all(table[:, 3] == 3)
    orbits = verb.output_action.orbits(vocabulary)
    assert len(set(orbits[[1, 2, 4, 5]])) == 1 and len(set(orbits)) == 3
    with pytest.raises(ValueError, match="not in the vocabulary"):
        verb.output_action.on_vocabulary(["I_WALK", "I_JUMP"])


def test_word_action_must_be_a_homomorphism():
    with pytest.raises(ValueError, match="not a group action"):
        WordAction(Group.cyclic(2), ["a", "b", "c"], [[0, 1, 2], [1, 2, 0]])


def test_check_equivariance_measures_the_violation():
    z4 = Group.cyclic(4)
    features = np.random.default_rng(0).normal(size=(3, 4, 5))
    translate = regular_transform(z4, axis=-2)
    assert check_equivariance(lambda x: np.tanh(x) * 2, z4, features, translate, translate) == 0
    assert check_equivariance(lambda x: x.sum(-2), z4, features, translate,
                              lambda g, y: y) == pytest.approx(0, abs=1e-12)
    weights = np.random.default_rng(1).normal(size=(4,))
    broken = check_equivariance(lambda x: x * weights[:, None], z4, features, translate,
                                translate)
    assert broken > 0.1


def test_ids_and_scores_transforms():
    permutations = np.array([[0, 1, 2], [0, 2, 1]])
    assert ids_transform(permutations)(1, [[1, 2, 0]]).tolist() == [[2, 1, 0]]
    scores = np.array([[10.0, 20.0, 30.0]])
    assert scores_transform(permutations)(1, scores).tolist() == [[10.0, 30.0, 20.0]]


@pytest.mark.parametrize("group", [Group.trivial(), Group.cyclic(2), Group.cyclic(3),
                                   Group.cyclic(4), Group.cyclic(5),
                                   Group.direct_product(Group.cyclic(4), Group.cyclic(2))],
                         ids=["1", "Z2", "Z3", "Z4", "Z5", "Z4xZ2"])
def test_real_fourier_basis_splits_every_translation_into_small_blocks(group):
    basis, real = group.real_fourier_basis()
    n = group.order
    np.testing.assert_allclose(basis.T @ basis, np.eye(n), atol=1e-12)
    # Z_n has 1 real character (2 for even n); Z4 x Z2 has 4.
    assert real == {1: 1, 2: 2, 3: 1, 4: 2, 5: 1, 8: 4}[n]
    inside = np.zeros((n, n), bool)
    inside[np.arange(real), np.arange(real)] = True
    for first in range(real, n, 2):
        inside[first:first + 2, first:first + 2] = True
    for u, translation in enumerate(group.right_translations()):
        # S_u f is f moved by u: (S_u f)(g) = f(g u).
        f = np.arange(n, dtype=float) ** 2
        np.testing.assert_array_equal(translation @ f, f[group.table[:, u]])
        blocks = basis.T @ translation @ basis
        np.testing.assert_allclose(blocks[~inside], 0.0, atol=1e-12)


def test_real_fourier_basis_needs_an_abelian_group():
    symmetric, _ = Group.from_generators([[1, 2, 0], [1, 0, 2]])
    assert not symmetric.is_abelian and Group.cyclic(6).is_abelian
    with pytest.raises(ValueError, match="abelian"):
        symmetric.real_fourier_basis()
