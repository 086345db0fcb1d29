"""The command line: the server's entry point (`main`), and the one-shot commands `import` and
`inspect` with what they share (`oneshot`) and the logging set-up (`logs`)."""
