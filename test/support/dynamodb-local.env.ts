/**
 * setupFiles of jest's "dynamodb-local" project: the files of that project run
 * on DynamoDB Local (test/support/store.ts reads TEST_STORE).
 */
process.env.TEST_STORE = 'dynamodb-local';
// The exhaustive explorations run their "quick" share here (the full default
// runs on dynalite): DynamoDB Local is about twice as slow a call, and CI has
// 2 cores. SCHEDULES_DEPTH set by hand wins.
process.env.SCHEDULES_DEPTH ??= 'quick';
// The change-stream properties run fewer cases here (8 of 30, the races 8 of 30),
// for the same reason.
process.env.CHANGE_STREAM_RUNS ??= '8';
process.env.CHANGE_STREAM_RACE_RUNS ??= '8';
// The feeds' properties likewise (6 of 15, and 6 of 12 resyncs).
process.env.FEED_RUNS ??= '6';
process.env.RESYNC_FEED_RUNS ??= '6';
// The feed reads' property over chunk sizes, range splits and Query cuts (15 of 60).
process.env.FEED_READ_RUNS ??= '15';
// The RSVP burst counted at the HTTP level: one ingest batch (10 RSVPs of 160) on an event of 100 guests, not 1,000
// (DynamoDB Local answers a wave of about 90 requests in about a second).
process.env.RSVP_BURST_RSVPS ??= '10';
process.env.RSVP_BURST_GUESTS ??= '100';
// The fault sweeps (a crash after each call, a write failing at each write)
// fail the first call of each kind and the last, not every one: what DynamoDB
// Local may answer differently depends on the kind of call (fault-points.ts).
process.env.FAULT_POINTS ??= 'first-of-each-kind';
