package aql

// BlockID is the block_name value of aqlprofile_pmc_event_t: the
// hsa_ven_amd_aqlprofile_block_name_t values, continued by
// aqlprofile_block_name_t from 34.
type BlockID uint32

// Block ids that the builders treat specially.
const (
	BlockGRBM BlockID = 3
	BlockSQ   BlockID = 6
	BlockTCC  BlockID = 12
	BlockGL2C BlockID = 29
)
