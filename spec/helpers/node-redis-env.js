// The 'node-redis' jest project (jest.config.js): the matrix specs make the lock's
// connections with node-redis (spec/helpers/clients.ts).
process.env.HOLDFAST_CLIENT = 'node-redis';
