// lib/lua/*.lua are imported as text: tsup's text loader in the build, a small
// transform (spec/helpers/lua-transform.js) under jest.
declare module '*.lua' {
  const source: string;
  export default source;
}
