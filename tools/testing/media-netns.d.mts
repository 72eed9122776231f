/** The device and address of the media network namespace (media-netns.mjs). */
export declare const MEDIA_DEVICE: string;
export declare const MEDIA_ADDRESS: string;
/** Why media tests cannot run here (a sentence), or null when they can. */
export declare function mediaNetnsUnavailable(): string | null;
