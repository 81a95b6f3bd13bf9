"""Analyses of finished runs and of the data, behind the command-line tools in `tools/`.

Each module is one topic; a tool in `tools/` parses its arguments, calls it and prints what
it returns:

- `output`: how a tool records its command line and prints one JSON line (`emit`);
- `errors`: `AnalysisError`, for a run or file an analysis does not apply to;
- `clause_coverage`: test commands of a length split made only of clauses seen in training;
- `clause_order`: a length model's test errors by where the longest clause comes;
- `length_oracle`: greedy decoding with each command's output length given;
- `without_eos`: the probe that trains without the `<eos>` targets;
- `composition_errors`: the kinds of error of the composition baselines;
- `export_check`: exact match through an exported SavedModel's string signature;
- `resume_check`: whether a run repeats, and resumes after a kill, to the last bit;
- `one_word_commands`: how a SCAN run answers the one-word commands of its training file;
- `jump_syntax_swap`: Syntactic Attention add-jump runs scored with `jump`'s syntactic row
  replaced, and the files that pool such scores;
- `failure_modes`: the failure class of each Syntactic Attention add-jump run;
- `stale_results`: the results files trained by other numerics than today's, and the seeds
  `reproduce --check` should train again.

This package sits above `compgen_tf.experiments` and below `compgen_tf.cli`: it reads run
directories, models and data, and never parses a command line. Importing it imports none of
its modules (they need TensorFlow).
"""
