/** A request refused by the API server, as the extender logs it. */
export declare const FORBIDDEN: RegExp;
/** [fromMs, toMs] of each start of kube-apiserver that reached "ready", from its log text. */
export declare function bootstrapWindows(apiserverLog: string): [number, number][];
/** The refusal lines of `extenderLog` that count: all but those logged while kube-apiserver was starting. */
export declare function countedRefusals(extenderLog: string, apiserverLog?: string): string[];
/** The counted refusals in the log files (the API server's log defaults to kube-apiserver.log beside the extender's). */
export declare function forbiddenLinesIn(extenderLogFile: string, apiserverLogFile?: string): string[];
