"""Exact match by category: overall, per category, and per group of categories.

A split whose lines carry a category (COGS: each gen line is one of 21 generalization cases;
`tfds_scan.load_categories`) is scored per category as well as overall. COGS's authors also
report lexical and structural generalization apart, so categories can be pooled into groups
(`tfds_scan.cogs.category_group`). Pure functions of the per-line outcomes: the experiment
writes their result to `metrics.json` (key `accuracy_by_category`), the report tabulates it
and `errors` counts error kinds the same way (`kinds_by_category`).

Example:
    >>> scores = category_scores([True, False, True, True], ["a", "a", "b", "c"],
    ...                          group_of={"a": "x", "b": "x", "c": "y"}.get)
    >>> scores["overall"]["accuracy"], scores["categories"]["a"]["accuracy"]
    (0.75, 0.5)
    >>> scores["groups"]["x"]
    {'correct': 2, 'total': 3, 'accuracy': 0.6666666666666666}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence


def tally(correct: int, total: int) -> dict:
    """`{"correct", "total", "accuracy"}` of `correct` exact matches among `total` lines."""
    return {"correct": int(correct), "total": int(total),
            "accuracy": correct / total if total else 0.0}


def category_scores(correct: Sequence[bool], categories: Sequence[str],
                    group_of: Callable[[str], str] | None = None) -> dict:
    """Exact match of a split overall, per category and (with `group_of`) per group.

    Args:
        correct: Whether each line was translated exactly.
        categories: Each line's category, aligned with `correct`.
        group_of: The group of a category (COGS: `tfds_scan.cogs.category_group`), or None.

    Returns:
        `{"overall": tally, "categories": {category: tally}}` (categories sorted), plus
        `"groups": {group: tally}` (sorted) with `group_of`; each tally
        `{"correct", "total", "accuracy"}`. A group pools the lines of its categories.

    Raises:
        ValueError: When `correct` and `categories` differ in length.
    """
    correct, categories = [bool(c) for c in correct], list(categories)
    if len(correct) != len(categories):
        raise ValueError(f"{len(correct)} outcomes but {len(categories)} categories")
    right, total = Counter(), Counter(categories)
    right.update(category for category, ok in zip(categories, correct) if ok)
    scores = {"overall": tally(sum(correct), len(correct)),
              "categories": {c: tally(right[c], total[c]) for c in sorted(total)}}
    if group_of is not None:
        group_right, group_total = Counter(), Counter()
        for category in total:
            group_right[group_of(category)] += right[category]
            group_total[group_of(category)] += total[category]
        scores["groups"] = {g: tally(group_right[g], group_total[g])
                            for g in sorted(group_total)}
    return scores


def counts_by_category(records, key: Callable[[dict], str]) -> dict:
    """`{category: {key(record): count}}` over records that carry a `category` (sorted by
    category); the error-analysis counts of `errors`, per category."""
    counts: dict[str, Counter] = {}
    for record in records:
        counts.setdefault(record["category"], Counter())[key(record)] += 1
    return {category: dict(counts[category]) for category in sorted(counts)}
