from fairseq_fast.draft.cli import main

main()
