"""The template verbaliser G(φ): first-order formulas back to English (issue 5)."""
