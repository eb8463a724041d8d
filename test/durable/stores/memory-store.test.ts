import { memoryStore } from '../../../src/durable/stores/memory-store.js';
import { describeJournalStoreContract } from './journal-store-contract.js';

describeJournalStoreContract('memoryStore', () => memoryStore());
