/** The console's icon (/console/favicon.svg): a loop around a spark, in the header's colours. */
export const CONSOLE_FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1d2330"/>
<path d="M23.5 10.5A9 9 0 1 0 25 16" fill="none" stroke="#7fb2ff" stroke-width="3" stroke-linecap="round"/>
<path d="M21 6.5l3 4.5-5 1.5z" fill="#7fb2ff"/>
<path d="M17 10l-4 7h3.5l-1.5 6 5-8h-3.5z" fill="#ffd166"/>
</svg>
`
