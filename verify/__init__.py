"""Certificates of the guarantees of a release (hook ``privtool_verifiers``)."""
