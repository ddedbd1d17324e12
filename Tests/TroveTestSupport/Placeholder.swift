// Placeholder: replaced by shared test helpers.
