"""What an adversary can infer from a release (hook ``privtool_attacks``)."""
