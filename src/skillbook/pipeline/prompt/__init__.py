"""The prompt catalog: the skills section the model sees, within its budget."""
