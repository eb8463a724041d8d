/** The Restate workflow that runs chains and tool loops by run id (run-workflow.ts). */
export const RUN_SERVICE = 'statecraftRun';
/** The Restate virtual object that keeps each run's journal (journal-object.ts). */
export const JOURNAL_SERVICE = 'statecraftJournal';
/** The Restate service that lists a deployment's runs for its clients (run-listing.ts). */
export const LISTING_SERVICE = 'statecraftListing';
