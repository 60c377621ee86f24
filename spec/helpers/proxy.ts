// Temporary: specs written against the old path keep compiling until their imports move to spec/kit/proxy.
export { TcpProxy } from '../kit/proxy';
