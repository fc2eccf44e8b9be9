"""What every part stands on: JavaScript's value rules, and the file system read and written safely."""
