package test

// otherCases are the RAID, volume-manager, crypto, swap and
// partition-table images of the differential test.
var otherCases = []sigCase{}
