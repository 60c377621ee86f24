// Redis Cluster's key slot (CRC16/XMODEM of the hash tag, mod 16384), so that
// watchdog batches can be split per slot: a script may only touch keys of one slot.

const table = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  table[i] = crc;
}

export function clusterSlot(key: string): number {
  let start = key.indexOf('{');
  let end = -1;
  if (start !== -1) end = key.indexOf('}', start + 1);
  const tagged = start !== -1 && end > start + 1;
  const bytes = Buffer.from(tagged ? key.slice(start + 1, end) : key);
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ b) & 0xff];
  return crc % 16384;
}
