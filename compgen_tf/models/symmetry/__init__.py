"""The toy-task models of "Symmetry and systematicity": rule learning, composition and
palindromes, with symbol convolutions, a StackLSTM and their baselines."""
