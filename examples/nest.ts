import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import { Redis } from 'ioredis';
import { LockClient } from 'holdfast';
import { HoldfastModule, WithLock } from 'holdfast/nest';

// #region example
// NestJS: HoldfastModule provides one LockClient and runs each request in its own owner
// scope; @WithLock runs a method under the lock its arguments name.
@Injectable()
export class StockService {
  constructor(private readonly locks: LockClient) {} // injected by its class

  @WithLock((sku: string) => `stock:${sku}`) // reenters: called inside the order's request
  async reserve(sku: string): Promise<number> {
    return this.locks.getLock(`stock:${sku}`).getHoldCount();
  }
}

@Controller('orders')
export class OrdersController {
  constructor(private readonly stock: StockService) {}

  @Get(':sku')
  @WithLock((sku: string) => `stock:${sku}`, { waitTime: 5_000 }) // else LockTimeoutError
  async order(@Param('sku') sku: string): Promise<{ holdCount: number }> {
    return { holdCount: await this.stock.reserve(sku) };
  }
}

export const appModule = (redis: Redis) => {
  @Module({
    imports: [HoldfastModule.forRoot({ connection: redis })], // closes its client at shutdown
    controllers: [OrdersController],
    providers: [StockService],
  })
  class AppModule {}
  return AppModule;
};
// #endregion example
