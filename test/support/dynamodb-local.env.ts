/**
 * setupFiles of jest's "dynamodb-local" project: the files of that project run
 * on DynamoDB Local (test/support/store.ts reads TEST_STORE).
 */
process.env.TEST_STORE = 'dynamodb-local';
