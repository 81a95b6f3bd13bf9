"""`ToyTask`: the task model of the toy tasks of "Symmetry and systematicity"."""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="compgen_tf")
class ToyTask(keras.Model):
    """A toy task's model: its functional backbone, trained with Keras' own `fit`.

    Built from `backbone.input` to the backbone's output (keras-hub's Task shape), so
    `compile`/`fit`/`evaluate`/`predict` are Keras'. The backbones are the functional
    models of `compgen_tf.models.symmetry.rule_learning`, `composition` and `palindromes`.

    Args:
        backbone: a functional `keras.Model`.
        **kwargs: passed to `keras.Model` (`name`, `trainable`).

    Example:
        >>> from compgen_tf.models.symmetry.palindromes import build_palindrome_model
        >>> task = ToyTask(build_palindrome_model("lstm"))
        >>> task.predict(np.zeros((1, 7), "int32"), verbose=0).shape
        (1, 7, 6)
    """

    def __init__(self, backbone, **kwargs):
        outputs = backbone(backbone.input)
        super().__init__(inputs=backbone.input, outputs=outputs, **kwargs)
        self.backbone = backbone

    def get_config(self):
        return {"backbone": keras.saving.serialize_keras_object(self.backbone),
                "name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        return cls(**config)
