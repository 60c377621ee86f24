// Lets specs import lib/lua/*.lua as strings, as the tsup build does (loader: text).
module.exports = {
  process(source) {
    return { code: `Object.defineProperty(exports, '__esModule', { value: true }); exports.default = ${JSON.stringify(source)};` };
  },
};
