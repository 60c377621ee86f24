// #region example
import RedisMock from 'ioredis-mock';
import { LockClient } from 'holdfast';

const locks = new LockClient(new RedisMock()); // close() it after the test, as in production
// #endregion example

export { locks };
