"""A TFDS builder for COGS (Kim & Linzen 2020), from the files shipped in tfds_scan/data/cogs."""

from __future__ import annotations

import tensorflow_datasets as tfds

from tfds_scan import cogs
from tfds_scan.local_code_path import LocalCodePath

_CITATION = """\
@inproceedings{kim2020cogs,
  title={{COGS}: A Compositional Generalization Challenge Based on Semantic Interpretation},
  author={Kim, Najoung and Linzen, Tal},
  booktitle={Proceedings of the 2020 Conference on Empirical Methods in Natural Language
             Processing (EMNLP)},
  pages={9087--9105},
  year={2020}
}
"""


class OfflineCogs(LocalCodePath, tfds.core.GeneratorBasedBuilder):
    """English sentences and their logical forms, with each line's category.

    Features: `source` (the sentence), `target` (the logical form) and `category` (one of
    the 21 generalization cases in `gen`; `in_distribution`, `primitive` or an
    `exposure_example_*` in the other splits). Config: `cogs`. Splits: `train`, `dev`,
    `test` and `gen`, in file order; example keys are line indices.

    Example:
        >>> builder = OfflineCogs(config="cogs", data_dir="/tmp/tfds")
        >>> builder.download_and_prepare()
        >>> builder.info.splits["gen"].num_examples
        21000
    """

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Initial release, from the files shipped in tfds_scan/data/cogs."}
    BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=name, description=text)
                       for name, text in cogs.CONFIG_DESCRIPTIONS.items()]

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description=("COGS (Kim & Linzen 2020): English sentences paired with logical "
                         "forms; gen holds 21 held-out kinds of combination, 1,000 lines each."),
            features=tfds.features.FeaturesDict({"source": tfds.features.Text(),
                                                 "target": tfds.features.Text(),
                                                 "category": tfds.features.Text()}),
            supervised_keys=("source", "target"),
            homepage="https://github.com/najoungkim/COGS",
            citation=_CITATION,
            disable_shuffling=True,  # file order is part of the contract
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # the files ship with the package
        examples = cogs.cogs_examples(self.builder_config.name)
        return {split: self._generate_examples(triples) for split, triples in examples.items()}

    def _generate_examples(self, triples):
        for line, (source, target, category) in enumerate(triples):
            yield line, {"source": source, "target": target, "category": category}
