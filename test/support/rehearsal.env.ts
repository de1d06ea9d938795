// setupFiles of jest's "rehearsal" project: its suites talk to the rehearsal (test/support/target.ts).
process.env.E2E_TARGET = 'rehearsal';
