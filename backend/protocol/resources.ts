import { type Static, Type } from '@sinclair/typebox';
import { BoundedRecord } from './bounds.js';

/**
 * Custom resources (GPUs and the like), as Spark's ResourceInformation and ResourceRequirement:
 * a resource is a name (`gpu`) and the addresses a worker has of it (`["0", "1"]`); an executor
 * asks for an amount of addresses, a task for an amount of its executor's. A worker offers them
 * in RegisterWorker, the master hands each executor addresses of its own (LaunchExecutor), the
 * executor tells its driver (RegisterExecutor) and the driver each task (TaskDescription).
 */

/** Kinds of resource one worker, executor or request names. */
export const MAX_RESOURCE_KINDS = 32;
/** Addresses of one kind on one worker (the largest machines have 16 GPUs, FPGAs a few more). */
export const MAX_RESOURCE_ADDRESSES = 1024;
/** One address: an index, a PCI bus id, a UUID. */
export const MAX_RESOURCE_ADDRESS_LENGTH = 128;
/** A resource's name: the part of `wick.worker.resource.<name>.amount` between the dots. */
export const RESOURCE_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export const ResourceName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: RESOURCE_NAME_PATTERN,
  description: 'A resource name (gpu, fpga): letters, digits, _ and -',
});

export const ResourceAddress = Type.String({
  minLength: 1,
  maxLength: MAX_RESOURCE_ADDRESS_LENGTH,
});

/** Addresses by resource name: what a worker has, or what one executor or task was given. */
export const ResourceAddresses = BoundedRecord(
  RESOURCE_NAME_PATTERN,
  Type.Array(ResourceAddress, { maxItems: MAX_RESOURCE_ADDRESSES, uniqueItems: true }),
  MAX_RESOURCE_KINDS,
  'Addresses by resource name (Spark’s Map[String, ResourceInformation])',
);
export type ResourceAddresses = Static<typeof ResourceAddresses>;

/** One executor's need of one resource (Spark's ResourceRequirement). */
export const ResourceRequirement = Type.Object(
  {
    resourceName: ResourceName,
    amount: Type.Integer({ minimum: 1, maximum: MAX_RESOURCE_ADDRESSES }),
  },
  { additionalProperties: false },
);
export type ResourceRequirement = Static<typeof ResourceRequirement>;

export const ResourceRequirements = Type.Array(ResourceRequirement, {
  maxItems: MAX_RESOURCE_KINDS,
  description: "Each executor's resources (wick.executor.resource.<name>.amount)",
});
