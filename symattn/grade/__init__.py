"""`symattn grade`: mark students' answers to an exam symattn made, with error carried forward and feedback."""
